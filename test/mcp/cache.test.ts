import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import { SkillsClient } from '@modelcontextprotocol/client/ext/skills';
import { createMcpHandler } from '@modelcontextprotocol/server';
import { beforeAll, describe, expect, it } from 'vitest';
import { createCatalog, type Catalog, type Namespace } from '../../src/catalog/index.ts';
import { DEFAULT_CACHE_TTL } from '../../src/config/rules.ts';
import { cachePolicy } from '../../src/mcp/cache.ts';
import { createServerFactory } from '../../src/mcp/server.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import { namespaceOf } from '../helpers/catalog.ts';
import { fixture } from '../helpers/fixtures.ts';
import { modernRequest } from '../helpers/server.ts';

const catalogRepo = fixture('catalog');
const c2 = catalogRepo.commits['c2']!;
const root = fixture('root-skill');
const r1 = root.commits['c1']!;

const ttl = { listTtlMs: 1500, pinnedTtlMs: 7_200_000 };

let open: Namespace;
let secret: Namespace;
beforeAll(async () => {
  open = await namespaceOf('open', catalogRepo.gitdir, c2, ['skills']);
  secret = await namespaceOf('secret', root.gitdir, r1);
});

const catalogOf = (...namespaces: Namespace[]): Catalog =>
  createCatalog({
    sources: namespaces.map((ns) => ({ id: ns.source, current: ns, retained: [] })),
    failures: [],
  });

/** One 2026-07-28 request to a server made for it, as the HTTP endpoint serves it; the JSON-RPC result. */
async function call(
  handler: ReturnType<typeof createMcpHandler>,
  method: string,
  params: Record<string, unknown> = {},
): Promise<Record<string, unknown>> {
  const body = (await (await handler.fetch(modernRequest(method, params))).json()) as {
    result?: Record<string, unknown>;
  };
  if (body.result === undefined) throw new Error(`${method}: ${JSON.stringify(body)}`);
  return body.result;
}

const hint = (result: Record<string, unknown>) => [result['ttlMs'], result['cacheScope']];

describe('cache hints, per result (2026-07-28)', () => {
  it('default to a minute for listings and a day for what a pinned URI names', () => {
    expect(DEFAULT_CACHE_TTL).toEqual({ listTtlMs: 60_000, pinnedTtlMs: 86_400_000 });
    expect(cachePolicy().listed).toEqual({ ttlMs: 60_000, cacheScope: 'private' });
    expect(cachePolicy().pinned('any')).toEqual({ ttlMs: 86_400_000, cacheScope: 'private' });
  });

  it("give each pinned result its source's scope and the listings the narrowest of all", async () => {
    const policy = cachePolicy(ttl, [
      { id: 'open', cacheScope: 'public' },
      { id: 'secret', cacheScope: 'private' },
    ]);
    const handler = createMcpHandler(
      createServerFactory({ catalog: catalogOf(open, secret), logger: silentLogger(), cache: policy }),
      { legacy: 'reject' },
    );
    const openSkill = `skill://open/${c2}/skills/pdf-forms`;
    const secretSkill = `skill://secret/${r1}/root-helper`;
    try {
      expect(hint(await call(handler, 'skills/list'))).toEqual([1500, 'private']);
      expect(hint(await call(handler, 'resources/list'))).toEqual([1500, 'private']);
      expect(hint(await call(handler, 'prompts/list'))).toEqual([1500, 'private']);
      expect(hint(await call(handler, 'tools/list'))).toEqual([1500, 'private']);
      expect(hint(await call(handler, 'resources/templates/list'))).toEqual([1500, 'private']);
      expect(hint(await call(handler, 'skills/get', { uri: `${openSkill}/SKILL.md` }))).toEqual([
        7_200_000,
        'public',
      ]);
      expect(hint(await call(handler, 'skills/get', { uri: `${secretSkill}/SKILL.md` }))).toEqual([
        7_200_000,
        'private',
      ]);
      const read = await call(handler, 'resources/read', { uri: `${openSkill}/references/FORMS.md` });
      expect([(read['contents'] as Array<{ uri: string }>)[0]!.uri, ...hint(read)]).toEqual([
        `${openSkill}/references/FORMS.md`,
        7_200_000,
        'public',
      ]);
      expect(hint(await call(handler, 'resources/read', { uri: `${secretSkill}/SKILL.md` }))).toEqual([
        7_200_000,
        'private',
      ]);
      const folder = await call(handler, 'resources/directory/read', { uri: openSkill });
      expect([(folder['resources'] as unknown[]).length, ...hint(folder)]).toEqual([3, 7_200_000, 'public']);
    } finally {
      await handler.close();
    }
  });

  it('are private everywhere once the server authenticates its callers, whatever the sources say', () => {
    const policy = cachePolicy(ttl, [{ id: 'open', cacheScope: 'public' }], true);
    expect([policy.listed, policy.pinned('open')]).toEqual([
      { ttlMs: 1500, cacheScope: 'private' },
      { ttlMs: 7_200_000, cacheScope: 'private' },
    ]);
  });

  it('let any cache share the listings when every source is public', async () => {
    const policy = cachePolicy(ttl, [{ id: 'open', cacheScope: 'public' }]);
    const handler = createMcpHandler(
      createServerFactory({ catalog: catalogOf(open), logger: silentLogger(), cache: policy }),
      { legacy: 'reject' },
    );
    try {
      expect(hint(await call(handler, 'skills/list'))).toEqual([1500, 'public']);
      expect(hint(await call(handler, 'resources/list'))).toEqual([1500, 'public']);
    } finally {
      await handler.close();
    }
  });

  it('are not sent to a 2025-11-25 client, whose results have no such fields', async () => {
    const policy = cachePolicy(ttl, [{ id: 'open', cacheScope: 'public' }]);
    const factory = createServerFactory({ catalog: catalogOf(open), logger: silentLogger(), cache: policy });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await factory().connect(serverSide);
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(clientSide);
    try {
      const uri = `skill://open/${c2}/skills/pdf-forms/SKILL.md`;
      const listing = (await new SkillsClient(client).list()) as unknown as Record<string, unknown>;
      const read = (await client.readResource({ uri })) as Record<string, unknown>;
      expect([...hint(listing), ...hint(read)]).toEqual([undefined, undefined, undefined, undefined]);
    } finally {
      await client.close();
    }
  });
});
