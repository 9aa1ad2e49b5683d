import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import { SkillsClient } from '@modelcontextprotocol/client/ext/skills';
import { describe, expect, it } from 'vitest';
import { buildNamespace, createCatalog } from '../../src/catalog/index.ts';
import { cachePolicy } from '../../src/mcp/cache.ts';
import { listPageSize, MAX_LIST_PAGE_SIZE, MAX_LIST_PAGES } from '../../src/mcp/paging.ts';
import { createServerFactory } from '../../src/mcp/server.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import { commitIndexOf, oneFileSkill } from '../helpers/catalog.ts';

const DIGEST = `sha256:${'0'.repeat(64)}`;

/** A catalog of one namespace of `count` one-file skills, and a host's SkillsClient connected to it in memory. */
async function hostOf(count: number) {
  const skills = Array.from({ length: count }, (_, i) =>
    oneFileSkill(`s${String(i).padStart(6, '0')}`, 'A skill.', {
      blob: 'c'.repeat(40),
      size: 1,
      digest: DIGEST,
    }),
  );
  const ns = buildNamespace(
    'big',
    commitIndexOf(skills),
    { repository: 'local:test' },
    async () => new Uint8Array(),
  );
  const catalog = createCatalog({ sources: [{ id: 'big', current: ns, retained: [] }], failures: [] });
  const factory = createServerFactory({
    catalog,
    logger: silentLogger(),
    cache: cachePolicy(),
    pageSize: 100,
  });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await factory().connect(serverSide);
  // The skills/list requests the host sends: one a page.
  const listings: unknown[] = [];
  const send = clientSide.send.bind(clientSide);
  clientSide.send = (message, options) => {
    if ('method' in message && message.method === 'skills/list') listings.push(message);
    return send(message, options);
  };
  const client = new Client({ name: 'host', version: '1.0.0' });
  await client.connect(clientSide);
  return { client, skills: new SkillsClient(client), pages: () => listings.length };
}

describe('a listing of a large catalog', () => {
  it(`never needs more than the SDK client's ${MAX_LIST_PAGES} pages: the page size grows with the catalog`, () => {
    expect([100, 6_400, 6_401, 20_000, 100_000, 640_000, 640_001].map((n) => listPageSize(100, n))).toEqual([
      100,
      100,
      101,
      313,
      1_563,
      MAX_LIST_PAGE_SIZE,
      MAX_LIST_PAGE_SIZE,
    ]);
    expect(Math.ceil(100_000 / listPageSize(100, 100_000))).toBe(MAX_LIST_PAGES);
    // A configured size larger than the rule's stays.
    expect(listPageSize(500, 10_000)).toBe(500);
  });

  // 1,563 a page (100,000 / 64, rounded up): 64 pages, where 100 a page would take 1,000 and the SDK stops at 64.
  it('lists every skill of a 100,000-skill catalog through the SDK SkillsClient at pageSize 100', async () => {
    const count = 100_000;
    const { client, skills, pages } = await hostOf(count);
    try {
      const listed = await skills.list();
      expect([
        listed.skills.length,
        listed.invalid.length,
        new Set(listed.skills.map((s) => s.uri)).size,
      ]).toEqual([count, 0, count]);
      expect(pages()).toBe(MAX_LIST_PAGES);
    } finally {
      await client.close();
    }
  }, 60_000);
});
