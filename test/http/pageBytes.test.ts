import { type AuthInfo, createMcpHandler } from '@modelcontextprotocol/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Catalog, createCatalog, type Namespace, onlySources } from '../../src/catalog/index.ts';
import { createMcpEndpoint, type McpEndpoint } from '../../src/http/mcpEndpoint.ts';
import { authInfoFor } from '../../src/mcp/caller.ts';
import { encodeCursor } from '../../src/mcp/paging.ts';
import { createServerFactory } from '../../src/mcp/server.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import { namespaceOf } from '../helpers/catalog.ts';
import { fixture } from '../helpers/fixtures.ts';
import { handled } from '../helpers/serving.ts';
import { MODERN } from '../helpers/server.ts';

const catalogRepo = fixture('catalog');
const root = fixture('root-skill');
const c1 = catalogRepo.commits['c1']!;
const c2 = catalogRepo.commits['c2']!;
const r1 = root.commits['c1']!;

const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientInfo': { name: 'test', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

/** A 2026-07-28 POST to /mcp; `body` and `headers` override what a well-behaved client sends. */
function post(params: Record<string, unknown>, body: Record<string, unknown> = {}, headers = {}): Request {
  return new Request('http://127.0.0.1/mcp', {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-method': 'skills/list',
      'mcp-protocol-version': MODERN,
      ...headers,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'skills/list',
      params: { ...params, _meta: ENVELOPE },
      ...body,
    }),
  });
}

/** Everything a client receives: status, headers, body bytes. */
async function received(response: Response) {
  return {
    status: response.status,
    statusText: response.statusText,
    headers: [...response.headers],
    body: Buffer.from(await response.arrayBuffer()).toString('latin1'),
  };
}

let open1: Namespace;
let open2: Namespace;
let solo: Namespace;
let catalog: Catalog;
let endpoint: McpEndpoint;
let sdk: ReturnType<typeof createMcpHandler>;

beforeAll(async () => {
  open1 = await namespaceOf('open', catalogRepo.gitdir, c1, ['skills']);
  open2 = await namespaceOf('open', catalogRepo.gitdir, c2, ['skills']);
  solo = await namespaceOf('solo', root.gitdir, r1);
  catalog = createCatalog({
    sources: [
      { id: 'open', current: open2, retained: [] },
      { id: 'solo', current: solo, retained: [] },
    ],
    failures: [],
  });
  const factory = createServerFactory({ catalog, logger: silentLogger(), pageSize: 3 });
  endpoint = createMcpEndpoint({ factory, logger: silentLogger() });
  // What the endpoint answered before pages were bytes: the SDK's handler over the same servers, whole.
  sdk = createMcpHandler(factory, { legacy: 'reject' });
});

afterAll(async () => {
  await endpoint.close();
  await sdk.close();
});

/** The endpoint's answer and the SDK's own to the same request, as received. */
async function both(request: () => Request, authInfo?: AuthInfo) {
  const ours = request();
  const theirs = request();
  const parsed = JSON.parse(await theirs.clone().text()) as unknown;
  return {
    ours: await received(await handled(endpoint, ours, '127.0.0.1', authInfo)),
    sdk: await received(
      await sdk.fetch(theirs, { parsedBody: parsed, ...(authInfo === undefined ? {} : { authInfo }) }),
    ),
  };
}

/** Every cursor of a walk from the first page, as the SDK answers it. */
async function cursors(): Promise<Array<string | undefined>> {
  const all: Array<string | undefined> = [undefined];
  for (;;) {
    const last = all.at(-1);
    const request = post(last === undefined ? {} : { cursor: last });
    const answer = (await (
      await sdk.fetch(request, { parsedBody: JSON.parse(await request.clone().text()) })
    ).json()) as {
      result: { nextCursor?: string };
    };
    if (answer.result.nextCursor === undefined) return all;
    all.push(answer.result.nextCursor);
  }
}

describe('skills/list pages answered from bytes serialized once', () => {
  it('answers every page of a walk exactly as the SDK does, whatever the id', async () => {
    const walk = await cursors();
    expect(walk.length).toBe(3);
    for (const cursor of walk)
      for (const id of [1, 0, -7, 2 ** 53 - 1, 'a', '"skills":[]', 'ünï\u2028', ''] as const) {
        const { ours, sdk: theirs } = await both(() => post(cursor === undefined ? {} : { cursor }, { id }));
        expect(ours).toEqual(theirs);
        expect(ours.status).toBe(200);
        const { id: echoed, result } = JSON.parse(Buffer.from(ours.body, 'latin1').toString('utf8')) as {
          id: unknown;
          result: { skills: unknown[] };
        };
        expect([echoed, result.skills.length]).toEqual([id, cursor === walk.at(-1) ? 2 : 3]);
      }
  });

  it('answers a page a cursor starts off the walk, and an empty listing, as the SDK does', async () => {
    const middle = `skill://open/${c2}/skills/data-pipeline/SKILL.md`;
    const off = await both(() => post({ cursor: encodeCursor(middle) }));
    expect(off.ours).toEqual(off.sdk);
    const last = await both(() => post({ cursor: encodeCursor(`skill://solo/${r1}/root-helper/SKILL.md`) }));
    expect(last.ours).toEqual(last.sdk);
    expect(last.ours.body).toContain('"skills":[]');
    const nobody = await both(
      () => post({}),
      authInfoFor(
        { id: 'token:none', visibility: onlySources([]) },
        { value: 't', clientId: 'c', scopes: [] },
      ),
    );
    expect(nobody.ours).toEqual(nobody.sdk);
  });

  it('answers errors and refused requests as the SDK does', async () => {
    const cases: Array<() => Request> = [
      () => post({ cursor: 'not-a-cursor!' }),
      () => post({ cursor: 42 }),
      () => post({}, { params: {} }),
      () => post({}, {}, { 'mcp-method': 'skills/get' }),
      () => post({}, {}, { 'mcp-protocol-version': '2099-01-01' }),
      () => post({}, { jsonrpc: '1.0' }),
      () => post({}, { id: null }),
      () => post({}, { id: 1.5 }),
    ];
    const answers: Array<[number, number]> = [];
    for (const request of cases) {
      const { ours, sdk: theirs } = await both(request);
      expect(ours).toEqual(theirs);
      const { error } = JSON.parse(ours.body) as { error: { code: number } };
      answers.push([ours.status, error.code]);
    }
    // Errors of the handler travel in a 200; what the SDK refuses before it, in a 400.
    expect(answers).toEqual([
      [200, -32602],
      [200, -32602],
      [400, -32602],
      [400, -32020],
      [400, -32020],
      [400, -32600],
      [400, -32600],
      [400, -32600],
    ]);
  });

  it("answers a caller's own sources, and the catalog after a swap, as the SDK does", async () => {
    const onlySolo = authInfoFor(
      { id: 'token:solo', visibility: onlySources(['solo']) },
      { value: 't', clientId: 'c', scopes: [] },
    );
    const seen = await both(() => post({}), onlySolo);
    expect(seen.ours).toEqual(seen.sdk);
    expect(seen.ours.body).not.toContain('skill://open/');
    const before = (await both(() => post({}))).ours.body;
    catalog.swap({
      sources: [
        { id: 'open', current: open1, retained: [open2] },
        { id: 'solo', current: solo, retained: [] },
      ],
      failures: [],
    });
    const after = await both(() => post({}));
    expect(after.ours).toEqual(after.sdk);
    expect(after.ours.body).not.toBe(before);
    expect(after.ours.body).toContain(`skill://open/${c1}/`);
  });
});
