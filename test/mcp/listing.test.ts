import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildNamespace, createCatalog, type Catalog, type Namespace } from '../../src/catalog/index.ts';
import { DEFAULT_LIST_LIMIT, LIST_PAGE_CHARS, MAX_LISTED_PROBLEMS } from '../../src/mcp/budget.ts';
import { createServerFactory } from '../../src/mcp/server.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import { problem } from '../../src/shared/reasons.ts';
import { cachePolicy } from '../../src/mcp/cache.ts';
import { commitIndexOf, oneFileSkill } from '../helpers/catalog.ts';

/** A namespace of `count` skills with descriptions of `length` characters, and `errors` skills not served. */
function synthetic(source: string, count: number, length: number, errors = 0): Namespace {
  const description = (i: number) => `Skill ${i}: ${'x'.repeat(length)}`.slice(0, length);
  const index = commitIndexOf(
    Array.from({ length: count }, (_, i) => {
      const name = `skill-${String(i).padStart(4, '0')}`;
      return oneFileSkill(name, description(i), {
        dir: `skills/${name}`,
        size: 10,
        digest: `sha256:${'d'.repeat(64)}`,
      });
    }),
    Array.from({ length: errors }, (_, i) =>
      problem(`broken/b${i}/SKILL.md`, 'name-invalid', `name "B${i}" must be lowercase`, 2),
    ),
  );
  return buildNamespace(source, index, { repository: 'local:test' }, async () => new Uint8Array());
}

type ListResult = {
  content: Array<{ text: string }>;
  structuredContent: {
    skills: Array<{ uri: string; name: string }>;
    total: number;
    nextCursor?: string;
    problems: unknown[];
    problemsTotal: number;
    prompts?: { served: number; skills: number; capped: boolean };
  };
};

async function connect(catalog: Catalog, maxPrompts?: number): Promise<Client> {
  const factory = createServerFactory({
    catalog,
    logger: silentLogger(),
    cache: cachePolicy({ listTtlMs: 1000, pinnedTtlMs: 1000 }),
    ...(maxPrompts === undefined ? {} : { maxPrompts }),
  });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await factory().connect(serverSide);
  const client = new Client({ name: 'test', version: '1.0.0' });
  await client.connect(clientSide);
  return client;
}

const list = async (client: Client, args: Record<string, unknown> = {}) =>
  (await client.callTool({ name: 'skill_list', arguments: args })) as unknown as ListResult;

/** What a host puts in front of the model: the text and the structured content. */
const charsOf = (result: ListResult) =>
  result.content[0]!.text.length + JSON.stringify(result.structuredContent).length;

describe('skill_list pages', () => {
  // The repository: 559 skills, 163,170 characters in one answer (about 290 per skill).
  const catalog = createCatalog({
    sources: [{ id: 'big', current: synthetic('big', 559, 290, 30), retained: [] }],
    failures: [],
  });
  let client: Client;
  beforeAll(async () => {
    client = await connect(catalog);
  });

  it('gives a default page well under 8,000 tokens, with the total and the next cursor', async () => {
    const first = await list(client);
    const { skills, total, nextCursor } = first.structuredContent;
    expect(total).toBe(559);
    expect(skills.length).toBeGreaterThan(0);
    expect(skills.length).toBeLessThanOrEqual(DEFAULT_LIST_LIMIT);
    expect(nextCursor).toEqual(expect.any(String));
    // At a pessimistic 3 characters a token (URIs, hex commits), the whole answer stays under 8,000 tokens.
    expect(charsOf(first)).toBeLessThan(8000 * 3);
    expect(first.content[0]!.text).toContain(
      `${skills.length} of 559 skills here. More: skill_list with cursor "${nextCursor}".`,
    );
  });

  it('walks every skill exactly once, in URI order, following nextCursor', async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await list(client, cursor === undefined ? {} : { cursor });
      seen.push(...page.structuredContent.skills.map((s) => s.name));
      cursor = page.structuredContent.nextCursor;
      pages++;
    } while (cursor !== undefined);
    expect(seen).toEqual(Array.from({ length: 559 }, (_, i) => `skill-${String(i).padStart(4, '0')}`));
    expect(pages).toBe(Math.ceil(559 / (await list(client)).structuredContent.skills.length));
  });

  it('takes a limit, and a query that ranks what matches best first, page after page', async () => {
    expect((await list(client, { limit: 5 })).structuredContent.skills.map((s) => s.name)).toEqual([
      'skill-0000',
      'skill-0001',
      'skill-0002',
      'skill-0003',
      'skill-0004',
    ]);
    const first = await list(client, { query: 'Skill 12', limit: 4 });
    // Ranked: the one skill with both words first, then those with one (equal scores, by URI); every skill has "skill".
    expect([first.structuredContent.total, first.structuredContent.skills.map((s) => s.name)]).toEqual([
      559,
      ['skill-0012', 'skill-0000', 'skill-0001', 'skill-0002'],
    ]);
    const second = await list(client, {
      query: 'Skill 12',
      limit: 4,
      cursor: first.structuredContent.nextCursor,
    });
    expect(second.structuredContent.skills.map((s) => s.name)).toEqual([
      'skill-0003',
      'skill-0004',
      'skill-0005',
      'skill-0006',
    ]);
  });

  it(`lists ${MAX_LISTED_PROBLEMS} problems on the first page, counts them all, and none on the next`, async () => {
    const first = await list(client);
    expect([first.structuredContent.problems.length, first.structuredContent.problemsTotal]).toEqual([
      MAX_LISTED_PROBLEMS,
      30,
    ]);
    expect(first.content[0]!.text).toContain(`Not served (30):\n- big: broken/b0/SKILL.md: name-invalid\n`);
    expect(first.content[0]!.text).toContain(
      '- and 10 more (skillpin check or skillpin status lists every one)',
    );
    const second = await list(client, { cursor: first.structuredContent.nextCursor });
    expect([second.structuredContent.problems, second.content[0]!.text.includes('Not served')]).toEqual([
      [],
      false,
    ]);
  });

  it('ends a page before a skill that would take it past the budget, and never gives an empty page', async () => {
    const long = createCatalog({
      sources: [{ id: 'long', current: synthetic('long', 100, 1024), retained: [] }],
      failures: [],
    });
    const longClient = await connect(long);
    const page = await list(longClient, { limit: 200 });
    const { skills } = page.structuredContent;
    expect(skills.length).toBeGreaterThan(1);
    expect(skills.length).toBeLessThan(100);
    expect(charsOf(page)).toBeLessThan(LIST_PAGE_CHARS + 3000);
    const huge = createCatalog({
      sources: [{ id: 'one', current: synthetic('one', 3, LIST_PAGE_CHARS), retained: [] }],
      failures: [],
    });
    expect((await list(await connect(huge))).structuredContent.skills.length).toBe(1);
  });
});

describe('prompts', () => {
  it('are capped at maxPrompts, the first skills in listing order, and skill_list says so', async () => {
    const catalog = createCatalog({
      sources: [{ id: 'big', current: synthetic('big', 50, 40), retained: [] }],
      failures: [],
    });
    const client = await connect(catalog, 3);
    const { prompts } = await client.listPrompts();
    expect(prompts.map((p) => p.name)).toEqual(['skill-0000', 'skill-0001', 'skill-0002']);
    await expect(client.getPrompt({ name: 'skill-0003' })).rejects.toThrow('no prompt named "skill-0003"');
    const listed = await list(client);
    expect(listed.structuredContent.prompts).toEqual({ served: 3, skills: 50, capped: true });
    expect(listed.content[0]!.text).toContain(
      'Prompts: the first 3 of 50 skills have one (maxPrompts); skill_load loads any skill.',
    );
    const all = await connect(catalog, 50);
    expect((await all.listPrompts()).prompts.length).toBe(50);
    expect((await list(all)).structuredContent.prompts).toEqual({ served: 50, skills: 50, capped: false });
  });
});
