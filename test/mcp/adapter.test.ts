import { type CacheHint, type McpRequestContext, McpServer } from '@modelcontextprotocol/server';
import { SkillsExtension } from '@modelcontextprotocol/server/ext/skills';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCatalog, EVERY_SOURCE, type Namespace } from '../../src/catalog/index.ts';
import { createMcpEndpoint, type McpEndpoint } from '../../src/http/mcpEndpoint.ts';
import { cachePolicy } from '../../src/mcp/cache.ts';
import { visibilityOf } from '../../src/mcp/caller.ts';
import { encodeCursor, MAX_CURSOR_CHARS } from '../../src/mcp/paging.ts';
import { verifiedReader } from '../../src/mcp/read.ts';
import { createServerFactory, type ServerFactory } from '../../src/mcp/server.ts';
import { createServingOwner, type ServingOwner } from '../../src/mcp/serving.ts';
import { catalogSkillSource } from '../../src/mcp/source.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import { SERVER_NAME, SERVER_VERSION } from '../../src/shared/version.ts';
import { namespaceOf } from '../helpers/catalog.ts';
import { fixture } from '../helpers/fixtures.ts';
import { countingServers, handled } from '../helpers/serving.ts';
import { MODERN } from '../helpers/server.ts';

/**
 * src/mcp/handlers.ts is the one place skillpin departs from the SDK: it answers skills/list, skills/get,
 * resources/read and resources/directory/read in place of the skills extension's own handlers. Here every such
 * answer is held to the answer of the SDK's extension over the same source, byte for byte (status, headers, body),
 * in both eras, and each intended difference is named where it shows.
 */

const catalogRepo = fixture('catalog');
const root = fixture('root-skill');
const c2 = catalogRepo.commits['c2']!;
const r1 = root.commits['c1']!;
const LEGACY = '2025-11-25';
const ERAS = ['modern', 'legacy'] as const;
type Era = (typeof ERAS)[number];
const IDS = [1, 0, -7, 2 ** 53 - 1, 'a', '', 'ünï\u2028', '"skills":[]'] as const;

/** `open` may be cached by shared caches, `solo` not; so the listing (which mixes them) is private. */
const cache = cachePolicy(undefined, [{ id: 'open', cacheScope: 'public' }, { id: 'solo' }]);

/** What a client receives: status, headers (a 2025-11-25 session's own id left out), body bytes. */
interface Received {
  status: number;
  headers: Array<[string, string]>;
  body: string;
}

async function received(response: Response): Promise<Received> {
  return {
    status: response.status,
    headers: [...response.headers].map(([name, value]) => [
      name,
      name === 'mcp-session-id' ? '(session)' : value,
    ]),
    body: Buffer.from(await response.arrayBuffer()).toString('latin1'),
  };
}

/** Bytes as `received` shows them. */
const latin1 = (text: string) => Buffer.from(text, 'utf8').toString('latin1');

interface Overrides {
  id?: unknown;
  /** Replaces the whole body (after the envelope is put in). */
  body?: Record<string, unknown>;
  /** Request headers set (a string) or left out (`undefined`). */
  headers?: Record<string, string | undefined>;
}

/** One client of an endpoint in one era: a 2025-11-25 one opens its session with its first request. */
function clientOf(endpoint: McpEndpoint, era: Era) {
  let session: Promise<string> | undefined;
  const post = (headers: Record<string, string | undefined>, body: unknown) =>
    handled(
      endpoint,
      new Request('http://127.0.0.1/mcp', {
        method: 'POST',
        headers: Object.entries({
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...headers,
        }).filter((header): header is [string, string] => header[1] !== undefined),
        body: JSON.stringify(body),
      }),
      '127.0.0.1',
    );
  const open = async () => {
    const response = await post(
      {},
      {
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: LEGACY, capabilities: {}, clientInfo: { name: 'test', version: '1' } },
      },
    );
    const id = response.headers.get('mcp-session-id')!;
    await response.arrayBuffer();
    const headers = { 'mcp-session-id': id, 'mcp-protocol-version': LEGACY };
    await (await post(headers, { jsonrpc: '2.0', method: 'notifications/initialized' })).arrayBuffer();
    return id;
  };
  return async (method: string, params: Record<string, unknown>, overrides: Overrides = {}) => {
    // The Mcp-Name header a client sends: the URI read, or the tool called.
    const name = method === 'tools/call' ? params['name'] : params['uri'];
    const named: Record<string, string> = typeof name === 'string' ? { 'mcp-name': name } : {};
    const body = { jsonrpc: '2.0', id: 'id' in overrides ? overrides.id : 1, method, params };
    if (era === 'modern') {
      const envelope = {
        'io.modelcontextprotocol/protocolVersion': MODERN,
        'io.modelcontextprotocol/clientInfo': { name: 'test', version: '1' },
        'io.modelcontextprotocol/clientCapabilities': {},
      };
      const headers = {
        'mcp-method': method,
        'mcp-protocol-version': MODERN,
        ...named,
        ...overrides.headers,
      };
      return received(
        await post(headers, { ...body, params: { ...params, _meta: envelope }, ...overrides.body }),
      );
    }
    const id = await (session ??= open());
    return received(
      await post(
        { 'mcp-session-id': id, 'mcp-protocol-version': LEGACY, ...overrides.headers },
        { ...body, ...overrides.body },
      ),
    );
  };
}
type Client = ReturnType<typeof clientOf>;

/** The SDK's own skills server over the same source: its extension's handlers, `hint` on every skills result. */
function sdkFactory(owner: ServingOwner, hint: CacheHint): ServerFactory {
  const read = verifiedReader(silentLogger());
  return (context?: McpRequestContext) => {
    const mcp = new McpServer(
      { name: SERVER_NAME, version: SERVER_VERSION },
      { capabilities: { resources: { listChanged: true } } },
    );
    const source = catalogSkillSource(() => owner.at(visibilityOf(context)), { read });
    new SkillsExtension({ source, cacheHint: hint }).attach(mcp);
    return mcp;
  };
}

let owner: ServingOwner;
const endpoints: McpEndpoint[] = [];
let ours: Record<Era, Client>;
/** The SDK's answers with the listing's hint, and with each source's pinned hint. */
let sdkListed: Record<Era, Client>;
let sdkPinned: Record<string, Record<Era, Client>>;

function clients(factory: ServerFactory): Record<Era, Client> {
  const endpoint = createMcpEndpoint({ factory, logger: silentLogger() });
  endpoints.push(endpoint);
  return { modern: clientOf(endpoint, 'modern'), legacy: clientOf(endpoint, 'legacy') };
}

let open: Namespace;
let solo: Namespace;
/** Ours again, counting the servers its factory makes. */
let counted: Client;
let made: () => number;

beforeAll(async () => {
  open = await namespaceOf('open', catalogRepo.gitdir, c2, ['skills']);
  solo = await namespaceOf('solo', root.gitdir, r1);
  const catalog = createCatalog({
    sources: [
      { id: 'open', current: open, retained: [] },
      { id: 'solo', current: solo, retained: [] },
    ],
    failures: [],
  });
  owner = createServingOwner(catalog, { pageSize: 3 });
  const logger = silentLogger();
  const factory = createServerFactory({
    catalog,
    serving: owner,
    logger,
    cache,
    tools: false,
    prompts: false,
    pageSize: 3,
  });
  ours = clients(factory);
  const counting = countingServers(factory);
  made = counting.made;
  counted = clients(counting.factory).modern;
  sdkListed = clients(sdkFactory(owner, cache.listed));
  sdkPinned = {
    open: clients(sdkFactory(owner, cache.pinned('open'))),
    solo: clients(sdkFactory(owner, cache.pinned('solo'))),
  };
});

afterAll(async () => {
  for (const endpoint of endpoints) await endpoint.close();
});

/** The cursors of a walk over the listing from its first page. */
function walk(): Array<string | undefined> {
  const cursors: Array<string | undefined> = [undefined];
  for (let page = owner.at(EVERY_SOURCE).listing(undefined); page.nextCursor !== undefined; ) {
    cursors.push(page.nextCursor);
    page = owner.at(EVERY_SOURCE).listing(page.nextCursor);
  }
  return cursors;
}

/** Every URI each of the three methods reads, with the source that serves it. */
function servedUris() {
  const state = owner.at(EVERY_SOURCE);
  const skills: string[] = [];
  const files: string[] = [];
  const dirs: string[] = [];
  for (const ns of [open, solo]) {
    const snapshot = state.snapshot(ns);
    skills.push(...snapshot.skills.keys());
    // A nested skill's file is listed by the skill around it too, under one URI.
    const uris = snapshot.ordered.flatMap((served) => [...served.files.values()].map((file) => file.uri));
    files.push(...new Set(uris));
    dirs.push(...snapshot.dirs.keys());
  }
  return { skills, files, dirs };
}

const sourceOf = (uri: string) => new URL(uri).host;
const PDF = `skill://open/${c2}/skills/pdf-forms`;

/** The JSON-RPC answer in a body: the JSON itself (2026-07-28), or its one SSE event (a 2025-11-25 session). */
// biome-ignore lint/suspicious/noExplicitAny: a test reads whichever answer it expects
function answerOf(body: string): any {
  const text = Buffer.from(body, 'latin1').toString('utf8');
  const event = /^event: message\ndata: (.*)\n\n$/s.exec(text);
  return JSON.parse(event === null ? text : event[1]!);
}

describe('handlers.ts answers as the SDK skills extension does over the same source', () => {
  it.each(ERAS)(
    '%s: skills/list, every page and id: the SDK answer, plus the page namespaces in result _meta',
    async (era) => {
      const cursors = walk();
      expect(cursors.length).toBe(3);
      for (const cursor of [...cursors, encodeCursor(`skill://open/${c2}/skills/data-pipeline/SKILL.md`)])
        for (const id of IDS) {
          const params = cursor === undefined ? {} : { cursor };
          const mine = await ours[era]('skills/list', params, { id });
          const theirs = await sdkListed[era]('skills/list', params, { id });
          // The SDK's skills/list copies only `skills` and `nextCursor` from its source's page: ours keeps the page's
          // namespace records, first in the result's `_meta` (where a 2026-07-28 answer also has the server's info).
          const records = JSON.stringify(owner.at(EVERY_SOURCE).listing(cursor)._meta).slice(1, -1);
          const meta = latin1(era === 'modern' ? `${records},` : `,"_meta":{${records}}`);
          expect(mine.body).toContain(meta);
          expect({ ...mine, body: mine.body.replace(meta, '') }).toEqual(theirs);
          expect(mine.status).toBe(200);
        }
    },
  );

  it.each(ERAS)(
    '%s: skills/get, resources/read and resources/directory/read of every served URI: the SDK answer with the source pinned hint',
    async (era) => {
      const { skills, files, dirs } = servedUris();
      expect([skills.length, files.length, dirs.length]).toEqual([8, 15, 14]);
      const calls = [
        ...skills.map((uri) => ['skills/get', uri] as const),
        ...files.map((uri) => ['resources/read', uri] as const),
        ...dirs.map((uri) => ['resources/directory/read', uri] as const),
      ];
      for (const [method, uri] of calls)
        for (const id of [7, 'x']) {
          const mine = await ours[era](method, { uri }, { id });
          expect(mine).toEqual(await sdkPinned[sourceOf(uri)]![era](method, { uri }, { id }));
          expect(mine.status).toBe(200);
          // The SDK takes one hint for all its skills results; a commit-pinned URI's is not the listing's.
          const listed = await sdkListed[era](method, { uri }, { id });
          if (era === 'modern') expect(mine.body).not.toBe(listed.body);
          else expect(mine).toEqual(listed);
        }
    },
  );

  it.each(ERAS)(
    '%s: errors are the SDK answers: unknown skill, source, commit, file and folder, bad cursors and params',
    async (era) => {
      const cases: Array<[string, Record<string, unknown>]> = [
        ['skills/list', { cursor: 'not-a-cursor!' }],
        ['skills/list', { cursor: 42 }],
        ['skills/get', { uri: `${PDF}-nope/SKILL.md` }],
        ['skills/get', { uri: `${PDF}/references/FORMS.md` }],
        ['skills/get', { uri: `skill://nobody/${c2}/x/SKILL.md` }],
        ['skills/get', { uri: `skill://open/${'0'.repeat(40)}/skills/pdf-forms/SKILL.md` }],
        ['skills/get', { uri: 'https://example.com/x' }],
        ['skills/get', {}],
        ['resources/read', { uri: `${PDF}/nope.md` }],
        ['resources/read', { uri: `${PDF}/references` }],
        ['resources/read', {}],
        ['resources/directory/read', { uri: `${PDF}/SKILL.md` }],
        ['resources/directory/read', { uri: `${PDF}/nope` }],
        ['resources/directory/read', { uri: PDF, cursor: 'not-a-cursor!' }],
        ['resources/directory/read', { uri: `${PDF}/references/..` }],
      ];
      const codes: number[] = [];
      for (const [method, params] of cases) {
        const mine = await ours[era](method, params, { id: 'e' });
        expect(mine).toEqual(await sdkListed[era](method, params, { id: 'e' }));
        expect(mine.status).toBe(200);
        codes.push(answerOf(mine.body).error.code);
      }
      // A request without a URI fails in the SDK's own resources/read schema (-32603), as it does for the SDK.
      expect(codes).toEqual([...Array(10).fill(-32602), -32603, ...Array(4).fill(-32602)]);
    },
  );

  it.each(ERAS)(
    '%s: resources/read takes the URI as sent, so it refuses what URL parsing would resolve or name otherwise',
    async (era) => {
      const read = async (uri: string) => ({
        mine: answerOf((await ours[era]('resources/read', { uri })).body),
        theirs: answerOf((await sdkPinned['open']![era]('resources/read', { uri })).body),
      });
      // The SDK resolves `..` and `%2e%2e` with WHATWG URL and reads the file they lead to.
      for (const uri of [`${PDF}/references/../SKILL.md`, `${PDF}/references/%2e%2e/SKILL.md`]) {
        const { mine, theirs } = await read(uri);
        expect(mine.error).toEqual({
          code: -32602,
          message: `${uri} is not a URI this server serves: dot segments are not allowed`,
          data: { uri },
        });
        expect(theirs.result.contents.map((content: { uri: string }) => content.uri)).toEqual([
          `${PDF}/SKILL.md`,
        ]);
      }
      // Another scheme, or no URI at all: the reason skills/get gives, where the SDK says not found or invalid.
      const other = await read('file:///etc/passwd');
      expect([other.mine.error, other.theirs.error]).toEqual([
        {
          code: -32602,
          message: 'file:///etc/passwd is not a URI this server serves: only skill:// URIs are served',
          data: { uri: 'file:///etc/passwd' },
        },
        {
          code: -32602,
          message: 'Resource not found: file:///etc/passwd',
          data: { uri: 'file:///etc/passwd' },
        },
      ]);
      const none = await read('not a uri');
      expect([none.mine.error, none.theirs.error]).toEqual([
        {
          code: -32602,
          message: 'not a uri is not a URI this server serves: only skill:// URIs are served',
          data: { uri: 'not a uri' },
        },
        {
          code: -32602,
          message: 'Resource URI not a uri is invalid',
          data: { uri: 'not a uri', reason: 'invalid_uri' },
        },
      ]);
    },
  );

  it('modern: a lone skills/list is answered from the page text with no server made; any other shape by a server, as the SDK answers it', async () => {
    const cursors = walk();
    // The SDK's answer, with the page namespaces ours adds where it served the listing.
    const sdkAnswer = async (params: Record<string, unknown>, overrides: Overrides) => {
      const theirs = await sdkListed.modern('skills/list', params, overrides);
      if (theirs.status !== 200 || answerOf(theirs.body).error !== undefined) return theirs;
      const cursor = params['cursor'] as string | undefined;
      const records = JSON.stringify(owner.at(EVERY_SOURCE).listing(cursor)._meta).slice(1, -1);
      // The result's own `_meta` is its last (each entry has one before it).
      const at = theirs.body.lastIndexOf('"_meta":{') + '"_meta":{'.length;
      return { ...theirs, body: `${theirs.body.slice(0, at)}${latin1(records)},${theirs.body.slice(at)}` };
    };
    for (const cursor of cursors)
      for (const id of IDS) {
        const params = cursor === undefined ? {} : { cursor };
        const before = made();
        const mine = await counted('skills/list', params, { id });
        expect(made()).toBe(before);
        expect(mine).toEqual(await sdkAnswer(params, { id }));
      }
    const shapes: Array<[string, Record<string, unknown>, Overrides, number]> = [
      ['a param the listing does not take', { extra: 1 }, {}, 1],
      ['an Mcp-Name header', {}, { headers: { 'mcp-name': 'x' } }, 1],
      ['no Mcp-Method header', {}, { headers: { 'mcp-method': undefined } }, 0],
      ['an Mcp-Method header naming skills/get', {}, { headers: { 'mcp-method': 'skills/get' } }, 0],
      ['no MCP-Protocol-Version header', {}, { headers: { 'mcp-protocol-version': undefined } }, 0],
      ['a text/plain body', {}, { headers: { 'content-type': 'text/plain' } }, 0],
      ['an id of null', {}, { id: null }, 0],
      ['no envelope', {}, { body: { params: {} } }, 0],
      ['a notification', {}, { body: { id: undefined } }, 1],
      // The SDK answers JSON whatever the Accept header says; so does the page text.
      [
        'an Accept of text/event-stream alone',
        { cursor: cursors[1] },
        { headers: { accept: 'text/event-stream' } },
        0,
      ],
    ];
    const servers: number[] = [];
    for (const [, params, overrides] of shapes) {
      const before = made();
      const mine = await counted('skills/list', params, overrides);
      servers.push(made() - before);
      expect(mine).toEqual(await sdkAnswer(params, overrides));
    }
    expect(servers).toEqual(shapes.map(([, , , servers]) => servers));
  });

  it('modern: a lone resources/read of a served file is answered with no server made; any other shape or a failed read by a server, as the SDK answers it', async () => {
    const { files } = servedUris();
    const sdkAnswer = (params: Record<string, unknown>, overrides: Overrides = {}) => {
      const uri = params['uri'];
      const pinned = typeof uri === 'string' && uri.startsWith('skill://open/') ? 'open' : 'solo';
      return sdkPinned[pinned]!.modern('resources/read', params, overrides);
    };
    for (const uri of files)
      for (const id of IDS) {
        const before = made();
        const mine = await counted('resources/read', { uri }, { id });
        expect(made()).toBe(before);
        expect(mine).toEqual(await sdkAnswer({ uri }, { id }));
        expect(answerOf(mine.body).result.contents[0].uri).toBe(uri);
      }
    const uri = `${PDF}/SKILL.md`;
    const sentinel = `=?base64?${Buffer.from(uri).toString('base64')}?=`;
    const shapes: Array<[string, Record<string, unknown>, Overrides, number]> = [
      ['a param the read does not take', { uri, extra: 1 }, {}, 1],
      ['no Mcp-Name header', { uri }, { headers: { 'mcp-name': undefined } }, 0],
      ['an Mcp-Name naming another file', { uri }, { headers: { 'mcp-name': `${PDF}/nope.md` } }, 0],
      ['the URI in an Mcp-Name sentinel', { uri }, { headers: { 'mcp-name': sentinel } }, 1],
      ['an Mcp-Method header naming skills/get', { uri }, { headers: { 'mcp-method': 'skills/get' } }, 0],
      ['no MCP-Protocol-Version header', { uri }, { headers: { 'mcp-protocol-version': undefined } }, 0],
      ['an id of null', { uri }, { id: null }, 0],
      ['a notification', { uri }, { body: { id: undefined } }, 1],
      ['a file not served', { uri: `${PDF}/nope.md` }, {}, 1],
      ['a folder', { uri: `${PDF}/references` }, {}, 1],
      ['a dot segment', { uri: `${PDF}/references/../SKILL.md` }, {}, 1],
      ['another scheme', { uri: 'file:///etc/passwd' }, {}, 1],
    ];
    const servers: number[] = [];
    for (const [, params, overrides] of shapes) {
      const before = made();
      const mine = await counted('resources/read', params, overrides);
      servers.push(made() - before);
      // The dot segment and the other scheme are refused where the SDK would read or say not found (above).
      if (params['uri'] === `${PDF}/references/../SKILL.md` || params['uri'] === 'file:///etc/passwd')
        expect(answerOf(mine.body).error.code).toBe(-32602);
      else expect(mine).toEqual(await sdkAnswer(params, overrides));
    }
    expect(servers).toEqual(shapes.map(([, , , servers]) => servers));
  });

  it.each(ERAS)(
    '%s: a skills/list cursor longer than any this server writes is refused before it is decoded',
    async (era) => {
      const cursor = 'a'.repeat(MAX_CURSOR_CHARS + 1);
      const mine = answerOf((await ours[era]('skills/list', { cursor })).body);
      const theirs = answerOf((await sdkListed[era]('skills/list', { cursor })).body);
      expect([mine.error, theirs.error]).toEqual([
        {
          code: -32602,
          message: `Invalid params for skills/list: cursor: Too big: expected string to have <=${MAX_CURSOR_CHARS} characters`,
        },
        {
          code: -32602,
          message: `invalid cursor "${'a'.repeat(64)}\u2026" (${MAX_CURSOR_CHARS + 1} characters)`,
        },
      ]);
    },
  );
});

describe("handlers.ts answers a lone skill_search as skillpin's own server does", () => {
  /** Ours with the tools, counting the servers made; and the same factory with every request answered by a server. */
  let direct: Client;
  let served: Client;
  let made: () => number;
  beforeAll(() => {
    const catalog = createCatalog({
      sources: [
        { id: 'open', current: open, retained: [] },
        { id: 'solo', current: solo, retained: [] },
      ],
      failures: [],
    });
    const factory = createServerFactory({
      catalog,
      serving: createServingOwner(catalog, { pageSize: 3 }),
      logger: silentLogger(),
      cache,
      prompts: false,
    });
    const counting = countingServers(factory);
    made = counting.made;
    direct = clients(counting.factory).modern;
    served = clients((context) => factory(context)).modern;
  });

  const search = (client: Client, args: unknown, overrides: Overrides = {}) =>
    client('tools/call', { name: 'skill_search', arguments: args }, overrides);

  it("modern: answered with no server made, byte for byte the server's answer, for every id", async () => {
    const calls: Array<[Record<string, unknown>, string[], number]> = [
      [{ query: 'pdf forms' }, [`${PDF}/SKILL.md`], 1],
      [{ query: 'data', limit: 1 }, [`skill://open/${c2}/skills/data-pipeline/SKILL.md`], 3],
      [{ query: 'pdf', source: 'solo' }, [], 0],
      [{ query: 'pdf', source: `open@${c2}` }, [`${PDF}/SKILL.md`], 1],
      // An argument the tool does not name is dropped by its schema, in both.
      [{ query: 'pdf forms', extra: 1 }, [`${PDF}/SKILL.md`], 1],
    ];
    for (const [args, uris, total] of calls)
      for (const id of IDS) {
        const before = made();
        const mine = await search(direct, args, { id });
        expect(made()).toBe(before);
        expect(mine).toEqual(await search(served, args, { id }));
        const { result } = answerOf(mine.body);
        expect(result.structuredContent.results.map((hit: { uri: string }) => hit.uri)).toEqual(uris);
        expect([result.structuredContent.total, result.resultType, result.isError]).toEqual([
          total,
          'complete',
          undefined,
        ]);
      }
  });

  it("modern: any other shape, arguments the tool refuses and an error answer are the server's", async () => {
    const query = { query: 'pdf' };
    const shapes: Array<[string, Record<string, unknown>, Overrides, number]> = [
      [
        'no Mcp-Name header',
        { name: 'skill_search', arguments: query },
        { headers: { 'mcp-name': undefined } },
        0,
      ],
      [
        'an Mcp-Name naming another tool',
        { name: 'skill_search', arguments: query },
        { headers: { 'mcp-name': 'skill_list' } },
        0,
      ],
      ['another tool', { name: 'skill_list', arguments: {} }, {}, 1],
      ['a param the call does not take', { name: 'skill_search', arguments: query, extra: 1 }, {}, 1],
      ['no arguments', { name: 'skill_search' }, {}, 1],
      ['an empty query', { name: 'skill_search', arguments: { query: '' } }, {}, 1],
      ['a limit of 0', { name: 'skill_search', arguments: { query: 'pdf', limit: 0 } }, {}, 1],
      ['a source not served', { name: 'skill_search', arguments: { query: 'pdf', source: 'nope' } }, {}, 1],
      ['a notification', { name: 'skill_search', arguments: query }, { body: { id: undefined } }, 1],
    ];
    const servers: number[] = [];
    for (const [, params, overrides] of shapes) {
      const before = made();
      const mine = await direct('tools/call', params, overrides);
      servers.push(made() - before);
      expect(mine).toEqual(await served('tools/call', params, overrides));
    }
    expect(servers).toEqual(shapes.map(([, , , servers]) => servers));
  });
});
