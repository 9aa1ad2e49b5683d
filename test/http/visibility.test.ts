import { Client, ProtocolError, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { SkillsClient } from '@modelcontextprotocol/client/ext/skills';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CatalogState, createCatalog, type Namespace } from '../../src/catalog/index.ts';
import { createAuthGate } from '../../src/http/auth/gate.ts';
import { staticTokens } from '../../src/http/auth/tokens.ts';
import { createMcpEndpoint } from '../../src/http/mcpEndpoint.ts';
import { MCP_PATH, type RunningHttpServer, startHttpServer } from '../../src/http/server.ts';
import { createServerFactory } from '../../src/mcp/server.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import { namespaceOf } from '../helpers/catalog.ts';
import { fixture } from '../helpers/fixtures.ts';
import { handled } from '../helpers/serving.ts';
import { connectHttp, type Era, MODERN } from '../helpers/server.ts';
import { cachePolicy } from '../../src/mcp/cache.ts';

const catalogRepo = fixture('catalog');
const rootRepo = fixture('root-skill');
const c1 = catalogRepo.commits['c1']!;
const c2 = catalogRepo.commits['c2']!;
const rootCommit = rootRepo.commits['c1']!;
const cache = cachePolicy();
const TOKENS = {
  ci: 'ci-token-0123456789abcdef',
  ops: 'ops-token-0123456789abcdef',
  admin: 'admin-token-0123456789abcdef',
};
const PRINCIPALS = [
  { name: 'ci', token: TOKENS.ci, sources: ['catalog'] },
  { name: 'ops', token: TOKENS.ops, sources: ['root'] },
  { name: 'admin', token: TOKENS.admin },
];

const ROOT_SKILL = `skill://root/${rootCommit}/root-helper/SKILL.md`;
const ROOT_FILE = `skill://root/${rootCommit}/root-helper/references/GUIDE.md`;
const ROOT_DIR = `skill://root/${rootCommit}/root-helper`;
const RETAINED = `skill://catalog/${c1}/skills/pdf-forms/SKILL.md`;
/** The same URIs under a source no config names: what an invisible source must answer like. */
const unknown = (uri: string) =>
  uri.replace('skill://root/', 'skill://nosuch/').replace('skill://catalog/', 'skill://nosuch/');

async function twoSources(): Promise<{ root: Namespace; current: Namespace; retained: Namespace }> {
  return {
    root: await namespaceOf('root', rootRepo.gitdir, rootCommit),
    current: await namespaceOf('catalog', catalogRepo.gitdir, c2, ['skills']),
    retained: await namespaceOf('catalog', catalogRepo.gitdir, c1, ['skills']),
  };
}

/** The error a call fails with: code, message, data. */
async function failure(call: Promise<unknown>): Promise<{ code: number; message: string; data: unknown }> {
  try {
    await call;
  } catch (error) {
    if (error instanceof ProtocolError) return { code: error.code, message: error.message, data: error.data };
    throw error;
  }
  throw new Error('expected the call to fail');
}

const toolText = (result: unknown) =>
  (result as { isError?: boolean; content: Array<{ text: string }> }).content.map((c) => c.text).join('\n');

describe.each<Era>(['modern', 'legacy'])('a caller sees only its sources, everywhere (%s)', (era) => {
  let server: RunningHttpServer;
  const clients: Record<string, { client: Client; skills: SkillsClient; close(): Promise<void> }> = {};

  beforeAll(async () => {
    const { root, current, retained } = await twoSources();
    const catalog = createCatalog({
      sources: [
        { id: 'catalog', current, retained: [retained] },
        { id: 'root', current: root, retained: [] },
      ],
      failures: [{ id: 'root', reason: 'source-timeout', detail: 'the last sync of root timed out' }],
    });
    const logger = silentLogger();
    server = await startHttpServer({
      listen: { host: '127.0.0.1', port: 0 },
      serving: {
        factory: createServerFactory({ catalog, logger, cache }),
        catalog,
        status: () => ({ version: 2, sources: [], failures: [] }),
      },
      logger,
      auth: createAuthGate({ tokens: PRINCIPALS }, { logger, mcpPath: MCP_PATH }),
    });
    for (const [name, token] of Object.entries(TOKENS)) {
      const connected = await connectHttp(server.url, era, token);
      clients[name] = { ...connected, skills: new SkillsClient(connected.client) };
    }
  });
  afterAll(async () => {
    for (const { close } of Object.values(clients)) await close();
    await server.close();
  });

  it('skills/list and resources/list show only its sources', async () => {
    const sourcesOf = (uris: string[]) => [...new Set(uris.map((uri) => uri.split('/')[2]))].sort();
    const listed = async (name: string) =>
      sourcesOf((await clients[name]!.skills.list()).skills.map((s) => s.uri));
    const resources = async (name: string) =>
      sourcesOf((await clients[name]!.client.listResources()).resources.map((r) => r.uri));
    expect([await listed('ci'), await listed('ops'), await listed('admin')]).toEqual([
      ['catalog'],
      ['root'],
      ['catalog', 'root'],
    ]);
    expect([await resources('ci'), await resources('ops'), await resources('admin')]).toEqual([
      ['catalog'],
      ['root'],
      ['catalog', 'root'],
    ]);
  });

  it('skills/get, resources/read and directory reads of an invisible source answer as an unknown source', async () => {
    const { client, skills } = clients['ci']!;
    const cases: Array<[string, (uri: string) => Promise<unknown>]> = [
      [ROOT_SKILL, (uri) => skills.get(uri)],
      [ROOT_FILE, (uri) => client.readResource({ uri })],
      [ROOT_DIR, (uri) => skills.readDirectory(uri)],
    ];
    for (const [uri, call] of cases) {
      const invisible = await failure(call(uri));
      expect(invisible).toEqual({
        code: -32602,
        message: `${uri}: no source "root" is configured`,
        data: { uri },
      });
      const missing = await failure(call(unknown(uri)));
      expect(missing).toEqual({
        code: -32602,
        message: `${unknown(uri)}: no source "nosuch" is configured`,
        data: { uri: unknown(uri) },
      });
    }
    // A retained commit of its own source is served; of an invisible one, not.
    expect((await skills.get(RETAINED)).skill.uri).toBe(RETAINED);
    expect(await failure(clients['ops']!.skills.get(RETAINED))).toEqual({
      code: -32602,
      message: `${RETAINED}: no source "catalog" is configured`,
      data: { uri: RETAINED },
    });
    // The one who may see it reads it.
    expect((await clients['admin']!.client.readResource({ uri: ROOT_FILE })).contents[0]!.uri).toBe(
      ROOT_FILE,
    );
  });

  it('tools list, load and read only its sources, and report only their failures', async () => {
    const { client } = clients['ci']!;
    const list = (await client.callTool({ name: 'skill_list', arguments: {} })).structuredContent as {
      skills: Array<{ source: string }>;
      failures: unknown[];
    };
    expect([[...new Set(list.skills.map((s) => s.source))], list.failures]).toEqual([['catalog'], []]);
    const adminList = (await clients['admin']!.client.callTool({ name: 'skill_list', arguments: {} }))
      .structuredContent as { failures: unknown[] };
    expect(adminList.failures).toEqual([
      { source: 'root', reason: 'source-timeout', detail: 'the last sync of root timed out' },
    ]);
    const call = async (name: string, args: Record<string, unknown>) =>
      toolText(await client.callTool({ name, arguments: args }));
    expect(await call('skill_load', { uri: ROOT_SKILL })).toBe(`no skill is served at ${ROOT_SKILL}`);
    expect(await call('skill_load', { uri: unknown(ROOT_SKILL) })).toBe(
      `no skill is served at ${unknown(ROOT_SKILL)}`,
    );
    expect(await call('skill_load', { name: 'root-helper' })).toBe(
      'no listed skill is named "root-helper"; skill_list shows what is served',
    );
    expect(await call('skill_load', { name: 'root-helper', source: 'root' })).toBe(
      'no listed skill is named "root-helper" in source "root"; skill_list shows what is served',
    );
    expect(await call('skill_file', { skill: ROOT_SKILL, paths: ['references/GUIDE.md'] })).toBe(
      `no skill is served at ${ROOT_SKILL}`,
    );
  });

  it('skill_search and the status page search rank only its sources', async () => {
    const query = 'how do I install and run this project';
    const found = async (name: string, args: Record<string, unknown> = { query }) =>
      (await clients[name]!.client.callTool({ name: 'skill_search', arguments: args })) as unknown as {
        isError?: boolean;
        content: Array<{ text: string }>;
        structuredContent?: { results: Array<{ uri: string; source: string }> };
      };
    const admin = (await found('admin')).structuredContent!.results;
    const ci = (await found('ci')).structuredContent!.results;
    expect([admin[0]!.uri, [...new Set(ci.map((r) => r.source))]]).toEqual([ROOT_SKILL, ['catalog']]);
    const invisible = await found('ci', { query, source: 'root' });
    const unknownSource = await found('ci', { query, source: 'nosuch' });
    expect([invisible.isError, toolText(invisible)]).toEqual([
      true,
      toolText(unknownSource).replace('"nosuch"', '"root"'),
    ]);
    const page = async (token: string) =>
      (
        await fetch(new URL(`/?q=${encodeURIComponent(query)}`, server.url), {
          headers: { authorization: `Bearer ${token}` },
        })
      ).text();
    expect([
      (await page(TOKENS.admin)).includes(ROOT_SKILL),
      (await page(TOKENS.ci)).includes('root-helper'),
    ]).toEqual([true, false]);
  });

  it('/healthz, open to anyone, says only that some source fails: no count, no id', async () => {
    const health = await fetch(server.url.replace('/mcp', '/healthz'));
    expect([health.status, await health.json()]).toEqual([200, { status: 'degraded' }]);
  });

  it('prompts are those of its skills only', async () => {
    const names = async (name: string) =>
      (await clients[name]!.client.listPrompts()).prompts.map((p) => p.name);
    expect(await names('ops')).toEqual(['root-helper']);
    expect(await names('ci')).not.toContain('root-helper');
    expect((await names('admin')).sort()).toEqual([...(await names('ci')), 'root-helper'].sort());
    expect(await failure(clients['ci']!.client.getPrompt({ name: 'root-helper' }))).toEqual({
      code: -32602,
      message: 'no prompt named "root-helper"; prompts/list shows them',
      data: undefined,
    });
  });
});

describe('list_changed reaches only the callers whose listing changed', () => {
  const authOf = (name: keyof typeof TOKENS) => {
    const found = staticTokens(PRINCIPALS)(TOKENS[name]);
    if (found === undefined) throw new Error(`no principal ${name}`);
    return found.authInfo;
  };
  let sources: Awaited<ReturnType<typeof twoSources>>;
  const stateOf = (catalogNs: Namespace, rootNs: Namespace): CatalogState => ({
    sources: [
      { id: 'catalog', current: catalogNs, retained: [] },
      { id: 'root', current: rootNs, retained: [] },
    ],
    failures: [],
  });
  beforeAll(async () => {
    sources = await twoSources();
  });

  /** An endpoint over a catalog that moves `catalog` and then `root`; each caller's notifications counted. */
  async function run(
    listen: (
      endpoint: ReturnType<typeof createMcpEndpoint>,
    ) => Promise<() => Promise<Record<string, number>>>,
  ) {
    const catalog = createCatalog(stateOf(sources.current, sources.root));
    const logger = silentLogger();
    const endpoint = createMcpEndpoint({ factory: createServerFactory({ catalog, logger, cache }), logger });
    const unsubscribe = catalog.onChange((previous, next) => endpoint.listingChanged(previous, next));
    const counted = await listen(endpoint);
    catalog.swap(stateOf(sources.retained, sources.root));
    catalog.swap(stateOf(sources.retained, await namespaceOf('root', rootRepo.gitdir, rootCommit)));
    const counts = await counted();
    unsubscribe();
    return counts;
  }

  it('over 2026-07-28 subscriptions/listen', async () => {
    const counts = await run(async (endpoint) => {
      const subscribed: Array<{ name: string; closed: Promise<string>; count: () => number }> = [];
      for (const name of ['ci', 'ops', 'admin'] as const) {
        const client = new Client(
          { name: 'test', version: '1.0.0' },
          { versionNegotiation: { mode: { pin: MODERN } } },
        );
        let count = 0;
        client.setNotificationHandler('notifications/resources/list_changed', () => {
          count++;
        });
        const transport = new StreamableHTTPClientTransport(new URL('http://skillpin.test/mcp'), {
          fetch: (url, init) => handled(endpoint, new Request(url, init), 'test', authOf(name)),
        });
        await client.connect(transport);
        const subscription = await client.listen({ resourcesListChanged: true });
        subscribed.push({ name, closed: subscription.closed, count: () => count });
      }
      return async () => {
        // Closing ends every stream gracefully, after what was already written to it.
        await endpoint.close();
        const ends = await Promise.all(subscribed.map((s) => s.closed));
        expect(ends).toEqual(['graceful', 'graceful', 'graceful']);
        return Object.fromEntries(subscribed.map((s) => [s.name, s.count()]));
      };
    });
    expect(counts).toEqual({ ci: 1, ops: 1, admin: 2 });
  });

  it('over 2025-11-25 sessions', async () => {
    const counts = await run(async (endpoint) => {
      const streams: Array<{ name: string; id: string; text: Promise<string> }> = [];
      for (const name of ['ci', 'ops', 'admin'] as const) {
        const send = (method: string, headers: Record<string, string>, body?: unknown) =>
          handled(
            endpoint,
            new Request('http://skillpin.test/mcp', {
              method,
              headers: { accept: 'application/json, text/event-stream', ...headers },
              ...(body === undefined ? {} : { body: JSON.stringify(body) }),
            }),
            'test',
            authOf(name),
          );
        const opened = await send(
          'POST',
          { 'content-type': 'application/json' },
          {
            jsonrpc: '2.0',
            id: 1,
            method: 'initialize',
            params: {
              protocolVersion: '2025-11-25',
              capabilities: {},
              clientInfo: { name: 'test', version: '1' },
            },
          },
        );
        const id = opened.headers.get('mcp-session-id')!;
        await opened.text();
        const session = { 'mcp-session-id': id, 'mcp-protocol-version': '2025-11-25' };
        await (
          await send(
            'POST',
            { ...session, 'content-type': 'application/json' },
            {
              jsonrpc: '2.0',
              method: 'notifications/initialized',
            },
          )
        ).text();
        const stream = await send('GET', session);
        expect(stream.status).toBe(200);
        streams.push({ name, id, text: stream.text() });
        // Another caller with this session id is told it does not exist.
        const other = name === 'ci' ? 'ops' : 'ci';
        const stolen = await handled(
          endpoint,
          new Request('http://skillpin.test/mcp', { method: 'GET', headers: session }),
          'test',
          authOf(other),
        );
        expect(stolen.status).toBe(404);
      }
      return async () => {
        await endpoint.close();
        const texts = await Promise.all(streams.map((s) => s.text));
        return Object.fromEntries(
          streams.map((s, i) => [s.name, texts[i]!.split('notifications/resources/list_changed').length - 1]),
        );
      };
    });
    expect(counts).toEqual({ ci: 1, ops: 1, admin: 2 });
  });
});
