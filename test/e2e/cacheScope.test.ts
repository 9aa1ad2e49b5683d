import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { fixture } from '../helpers/fixtures.ts';
import { connectHttp, modernRequest, writeConfig } from '../helpers/server.ts';
import { type InProcessServer, serveInProcess } from '../helpers/serving.ts';

const catalog = fixture('catalog');
const c1 = catalog.commits['c1']!;
const c2 = catalog.commits['c2']!;
const TOKENS = { ci: 'ci-token-0123456789abcdef', admin: 'admin-token-0123456789abcdef' };
const ENV = { CACHE_CI_TOKEN: TOKENS.ci, CACHE_ADMIN_TOKEN: TOKENS.admin };

// Local repositories, read without credentials: with no auth, every answer is the same for every caller.
const SOURCES = [
  { id: 'open', path: catalog.gitdir, commit: c2, paths: ['skills'] },
  { id: 'ver', path: catalog.gitdir, refs: ['v*'], paths: ['skills'] },
];
const AUTH = {
  tokens: [
    { name: 'ci', token: '${CACHE_CI_TOKEN}', sources: ['open'] },
    { name: 'admin', token: '${CACHE_ADMIN_TOKEN}' },
  ],
};

const SKILL = `skill://open/${c2}/skills/pdf-forms`;
/** The same skill in the namespace of a ref of the `refs:` source. */
const REF_SKILL = `skill://ver.v1/${c1}/skills/pdf-forms`;

type Call = readonly [method: string, params: Record<string, unknown>];
/** Every method, in the order the table asks them; prompts/get asks for `prompt`. */
const callsFor = (prompt: string): Record<string, Call> => ({
  'skills/list': ['skills/list', {}],
  'skills/get': ['skills/get', { uri: `${SKILL}/SKILL.md` }],
  'resources/read': ['resources/read', { uri: `${SKILL}/references/FORMS.md` }],
  'resources/directory/read': ['resources/directory/read', { uri: SKILL }],
  'resources/list': ['resources/list', {}],
  'resources/templates/list': ['resources/templates/list', {}],
  'prompts/list': ['prompts/list', {}],
  'prompts/get': ['prompts/get', { name: prompt }],
  'tools/list': ['tools/list', {}],
  'tools/call': ['tools/call', { name: 'skill_list', arguments: {} }],
});
const METHODS = Object.keys(callsFor(''));
const LISTINGS = ['skills/list', 'resources/list', 'resources/templates/list', 'prompts/list', 'tools/list'];
const PINNED = ['skills/get', 'resources/read', 'resources/directory/read'];

/** What each method's result should carry in the 2026-07-28 era: prompts/get and tools/call are not cacheable. */
function expected(scope: 'public' | 'private'): Record<string, unknown[]> {
  return Object.fromEntries(
    METHODS.map((method) => [
      method,
      LISTINGS.includes(method)
        ? [60_000, scope]
        : PINNED.includes(method)
          ? [86_400_000, scope]
          : [undefined, undefined],
    ]),
  );
}

/** One 2026-07-28 request POSTed to the endpoint, as a stateless client sends it; the JSON-RPC result. */
async function modern(url: string, [method, params]: Call, token?: string) {
  const response = await fetch(modernRequest(method, params, { url, token }));
  const body = (await response.json()) as { result?: Record<string, unknown> };
  if (body.result === undefined) throw new Error(`${method}: ${JSON.stringify(body)}`);
  return body.result;
}

const hint = (result: Record<string, unknown>) => [result['ttlMs'], result['cacheScope']];

/** Every method's [ttlMs, cacheScope], over 2026-07-28 requests. */
async function modernHints(url: string, token?: string): Promise<Record<string, unknown[]>> {
  const prompts = (await modern(url, ['prompts/list', {}], token))['prompts'] as Array<{ name: string }>;
  const hints: Record<string, unknown[]> = {};
  for (const [name, call] of Object.entries(callsFor(prompts[0]!.name)))
    hints[name] = hint(await modern(url, call, token));
  return hints;
}

/** Every method's [ttlMs, cacheScope], over one 2025-11-25 session. */
async function legacyHints(url: string, token?: string): Promise<Record<string, unknown[]>> {
  const { client, close } = await connectHttp(url, 'legacy', token);
  const hints: Record<string, unknown[]> = {};
  try {
    const prompt = (await client.listPrompts()).prompts[0]!.name;
    for (const [name, [method, params]] of Object.entries(callsFor(prompt)))
      hints[name] = hint(await (client as Client).request({ method, params }, z.looseObject({})));
  } finally {
    await close();
  }
  return hints;
}

const ABSENT = Object.fromEntries(METHODS.map((method) => [method, [undefined, undefined]]));

describe('cacheScope and ttlMs of every method, served without auth', () => {
  let server: InProcessServer;
  beforeAll(async () => {
    server = await serveInProcess(writeConfig({ sources: SOURCES }), { env: ENV });
  });
  afterAll(() => server.stop());

  it('are public in the 2026-07-28 era: every caller gets the same answer', async () => {
    expect(await modernHints(server.url)).toEqual(expected('public'));
  });

  it('are public for a namespace of a refs: source that needs no credentials', async () => {
    const get = await modern(server.url, ['skills/get', { uri: `${REF_SKILL}/SKILL.md` }]);
    const read = await modern(server.url, ['resources/read', { uri: `${REF_SKILL}/SKILL.md` }]);
    const folder = await modern(server.url, ['resources/directory/read', { uri: REF_SKILL }]);
    expect([hint(get), hint(read), hint(folder)]).toEqual([
      [86_400_000, 'public'],
      [86_400_000, 'public'],
      [86_400_000, 'public'],
    ]);
  });

  it('are not sent in the 2025-11-25 era', async () => {
    expect(await legacyHints(server.url)).toEqual(ABSENT);
  });
});

describe('cacheScope and ttlMs of every method, served with auth', () => {
  let server: InProcessServer;
  beforeAll(async () => {
    server = await serveInProcess(writeConfig({ sources: SOURCES, auth: AUTH }), { env: ENV });
  });
  afterAll(() => server.stop());

  it.each(['ci', 'admin'] as const)(
    'are private in the 2026-07-28 era: %s gets an answer of its own',
    async (name) => {
      expect(await modernHints(server.url, TOKENS[name])).toEqual(expected('private'));
    },
  );

  it('are private for a namespace of a refs: source', async () => {
    const get = await modern(server.url, ['skills/get', { uri: `${REF_SKILL}/SKILL.md` }], TOKENS.admin);
    expect(hint(get)).toEqual([86_400_000, 'private']);
  });

  it('are not sent in the 2025-11-25 era', async () => {
    expect(await legacyHints(server.url, TOKENS.admin)).toEqual(ABSENT);
  });
});
