import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  buildNamespace,
  type Catalog,
  createCatalog,
  EVERY_SOURCE,
  onlySources,
  visibleCatalog,
} from '../../src/catalog/index.ts';
import {
  DEFAULT_SEARCH_LIMIT,
  LIST_PAGE_CHARS,
  MAX_SEARCH_LIMIT,
  SEARCH_LINE_DESCRIPTION_CHARS,
} from '../../src/mcp/budget.ts';
import { cachePolicy } from '../../src/mcp/cache.ts';
import { createMetrics } from '../../src/http/metrics.ts';
import { pageSearch, withSearchStats } from '../../src/http/search.ts';
import { buildSkillIndex, MAX_QUERY_TERMS, queryTerms, searchTerms } from '../../src/mcp/search.ts';
import { createServingOwner } from '../../src/mcp/serving.ts';
import { buildSnapshot } from '../../src/mcp/snapshot.ts';
import { createServerFactory } from '../../src/mcp/server.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import { commitIndexOf, namespaceOf, oneFileSkill } from '../helpers/catalog.ts';
import { fixture } from '../helpers/fixtures.ts';
import { searchNamespaces } from '../helpers/search.ts';

const catalogRepo = fixture('catalog');
const rootRepo = fixture('root-skill');
const c1 = catalogRepo.commits['c1']!;
const c2 = catalogRepo.commits['c2']!;
const rootCommit = rootRepo.commits['c1']!;

const uri = (name: string, commit = c2, source = 'catalog') =>
  `skill://${source}/${commit}/skills/${name}/SKILL.md`;
const ROOT_HELPER = `skill://root/${rootCommit}/root-helper/SKILL.md`;

interface SearchResult {
  isError?: boolean;
  content: Array<{ text: string }>;
  structuredContent: {
    results: Array<{
      uri: string;
      name: string;
      description: string;
      source: string;
      ref?: string;
      commit: string;
      score: number;
      matched: Record<string, unknown>;
      versions?: Array<{ uri: string; source: string; ref?: string; commit: string }>;
    }>;
    total: number;
  };
}

async function connect(catalog: Catalog): Promise<Client> {
  const factory = createServerFactory({ catalog, logger: silentLogger(), cache: cachePolicy() });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await factory().connect(serverSide);
  const client = new Client({ name: 'test', version: '1.0.0' });
  await client.connect(clientSide);
  return client;
}

const search = async (client: Client, args: Record<string, unknown>) =>
  (await client.callTool({ name: 'skill_search', arguments: args })) as unknown as SearchResult;
const uris = (result: SearchResult) => result.structuredContent.results.map((r) => r.uri);

describe('search terms', () => {
  it('splits kebab-case, snake_case and camelCase (a camelCase word also whole), lowercases, stems and drops function words', () => {
    expect(
      searchTerms('pdf-forms snake_case PowerPoint, Filling the What validates a form. Use using used'),
    ).toEqual(['pdf', 'form', 'snake', 'case', 'powerpoint', 'power', 'point', 'fill', 'valid', 'form']);
  });
});

describe('query terms', () => {
  it(`takes each term of a query once, in order, then two words side by side joined, the first ${MAX_QUERY_TERMS}`, () => {
    expect(queryTerms('Fill the PDF form, form and FORMS')).toEqual(['fill', 'pdf', 'form', 'pdfform']);
    // `word press` finds what `WordPress` is indexed by, and `WordPress` what `word press` is.
    expect([queryTerms('word press'), queryTerms('WordPress')]).toEqual([
      ['word', 'press', 'wordpress'],
      ['wordpress', 'word', 'press'],
    ]);
    const words = Array.from({ length: MAX_QUERY_TERMS + 5 }, (_, i) => `w${i}x`);
    expect(queryTerms(words.join(' '))).toEqual(words.slice(0, MAX_QUERY_TERMS));
  });

  it('searches a British -our word in its American spelling too, and leaves our, four, hours and tour alone', () => {
    expect(queryTerms('our colours, favourite behaviour, four hours on tour')).toEqual([
      ...['colour', 'color', 'favourit', 'favorit', 'behaviour', 'behavior', 'four', 'hour', 'tour'],
      ...['coloursfavourit', 'favouritebehaviour', 'behaviourfour', 'fourhour'],
    ]);
  });

  it('ranks a query that says a word twice as one that says it once', async () => {
    const { ns } = bodiesNamespace({ a: 'Reconcile the ledger.', b: 'Close the ledger and the books.' });
    const index = await buildSkillIndex(ns, buildSnapshot(ns).ordered);
    const ranked = (query: string) => index.search(query).map((hit) => [hit.served.skill.name, hit.score]);
    expect(ranked('ledger books books ledger')).toEqual(ranked('ledger books'));
  });
});

describe('skill_search', () => {
  let catalog: Catalog;
  let client: Client;
  beforeAll(async () => {
    catalog = createCatalog({
      sources: [
        {
          id: 'catalog',
          current: await namespaceOf('catalog', catalogRepo.gitdir, c2, ['skills']),
          retained: [await namespaceOf('catalog', catalogRepo.gitdir, c1, ['skills'])],
        },
        { id: 'root', current: await namespaceOf('root', rootRepo.gitdir, rootCommit), retained: [] },
      ],
      failures: [],
    });
    client = await connect(catalog);
  });

  it('ranks by the words of the SKILL.md body too, best first', async () => {
    const pdf = await search(client, { query: 'fill in the fields of a government application document' });
    expect(uris(pdf)[0]).toBe(uri('pdf-forms'));
    const rows = await search(client, { query: 'check every line of a spreadsheet against column rules' });
    expect(uris(rows)[0]).toBe(uri('data-pipeline/stages/validate-rows'));
    const setup = await search(client, { query: 'how do I install and run this project' });
    expect(uris(setup)[0]).toBe(ROOT_HELPER);
  });

  it('answers with the structured results and one compact line per result', async () => {
    const result = await search(client, { query: 'commit message subject line', limit: 2 });
    const [first] = result.structuredContent.results;
    expect(first).toEqual({
      uri: uri('git-commit-style'),
      name: 'git-commit-style',
      description:
        'Writes git commit messages in the house style: a short imperative subject, a blank line, then the why. Use when committing or when asked to reword a commit.',
      source: 'catalog',
      commit: c2,
      score: expect.any(Number),
      matched: {
        name: ['commit'],
        description: ['commit', 'message', 'subject', 'line'],
        headings: ['commit'],
        text: ['subject', 'line'],
      },
    });
    const { results, total } = result.structuredContent;
    expect(results.length).toBe(2);
    expect(results[0]!.score).toBeGreaterThan(results[1]!.score);
    const why = (r: SearchResult['structuredContent']['results'][number]) =>
      Object.entries(r.matched)
        .map(([place, words]) => `${place} (${(words as string[]).join(', ')})`)
        .join(', ');
    expect(result.content[0]!.text.split('\n')).toEqual([
      `2 of ${total} matching skills, best first (load one with skill_load):`,
      `1. git-commit-style (catalog) ${uri('git-commit-style')}: ${first!.description} [matched name (commit), description (commit, message, subject, line), headings (commit), text (subject, line)]`,
      `2. ${results[1]!.name} (${results[1]!.source}) ${results[1]!.uri}: ${results[1]!.description} [matched ${why(results[1]!)}]`,
    ]);
  });

  it(`gives ${DEFAULT_SEARCH_LIMIT} results by default and refuses a limit over ${MAX_SEARCH_LIMIT}`, async () => {
    const all = await search(client, { query: 'use when the user asks' });
    expect(all.structuredContent.results.length).toBe(
      Math.min(DEFAULT_SEARCH_LIMIT, all.structuredContent.total),
    );
    const one = await search(client, { query: 'release', limit: 1 });
    expect([one.structuredContent.results.length, one.structuredContent.total > 1]).toEqual([1, true]);
    const tooMany = await client.callTool({
      name: 'skill_search',
      arguments: { query: 'x', limit: MAX_SEARCH_LIMIT + 1 },
    });
    expect(tooMany.isError).toBe(true);
  });

  it('searches listed commits only, unless source names one commit', async () => {
    // pdf-forms is in both commits of catalog: the listed one (c2) alone is searched.
    expect(uris(await search(client, { query: 'pdf' }))).toEqual([uri('pdf-forms')]);
    expect(uris(await search(client, { query: 'pdf', source: `catalog@${c1}` }))).toEqual([
      uri('pdf-forms', c1),
    ]);
    expect(uris(await search(client, { query: 'install run project', source: 'catalog' }))).not.toContain(
      ROOT_HELPER,
    );
    expect(uris(await search(client, { query: 'install run project', source: 'root' }))).toEqual([
      ROOT_HELPER,
    ]);
  });

  it('says so when nothing matches, and when the source is not served', async () => {
    const none = await search(client, { query: 'kubernetes autoscaling' });
    expect([none.structuredContent, none.content[0]!.text]).toEqual([
      { results: [], total: 0 },
      'No served skill matches; try other words, or skill_list to see every skill.',
    ]);
    const unknown = await search(client, { query: 'pdf', source: 'nosuch' });
    expect([unknown.isError, unknown.content[0]!.text]).toEqual([
      true,
      'no source "nosuch" is served; skill_list shows the sources and their commits',
    ]);
  });

  it("ranks skill_list's query the same way, where the words of the name and description alone found nothing", async () => {
    const query = 'fill in the fields of a government application document';
    const listed = (await client.callTool({ name: 'skill_list', arguments: { query } }))
      .structuredContent as {
      skills: Array<{ uri: string }>;
      total: number;
    };
    const searched = await search(client, { query, limit: MAX_SEARCH_LIMIT });
    expect(listed.skills[0]!.uri).toBe(uri('pdf-forms'));
    expect([listed.skills.map((s) => s.uri), listed.total]).toEqual([
      uris(searched),
      searched.structuredContent.total,
    ]);
  });

  it('builds one index per namespace, once, and reports what it cost', async () => {
    const ns = catalog.listed()[0]!;
    const owner = createServingOwner(catalog);
    const state = owner.at(EVERY_SOURCE);
    expect(state.searchIndex(ns)).toBe(owner.at(EVERY_SOURCE).searchIndex(ns));
    await state.searchIndex(ns);
    expect(owner.searchStats(ns)).toEqual({
      buildMs: expect.any(Number),
      stored: false,
      skills: ns.skills.length,
      terms: expect.any(Number),
      bytes: expect.any(Number),
      unread: 0,
      cut: 0,
    });
    const stats = owner.searchStats(ns)!;
    const report = withSearchStats(
      {
        version: 2,
        sources: [
          {
            id: 'catalog',
            repository: 'local:test',
            ref: null,
            current: { commit: c2 },
            retained: [],
            syncing: false,
            lastSync: null,
            lastSuccess: null,
            nextSync: null,
            lastError: null,
          },
        ],
        failures: [],
      },
      owner,
    );
    expect(report.sources[0]!.current).toEqual({ commit: c2, search: stats });
    const metrics = createMetrics({
      catalog,
      searchStats: owner.searchStats,
      status: () => report,
      process: false,
    });
    const text = await metrics.render();
    expect(text).toContain(`skillpin_search_index_terms{source="catalog"} ${stats.terms}\n`);
    expect(text).toContain(`skillpin_search_index_bytes{source="catalog"} ${stats.bytes}\n`);
    expect(text).toContain(`skillpin_search_index_build_seconds{source="catalog"} ${stats.buildMs / 1000}\n`);
  });
});

/** A namespace of one-file skills (name → SKILL.md body) whose blob reads are counted; `handed` names the skills
 * whose SKILL.md text the namespace hands on as the indexer's (Namespace.skillMdBody). */
function bodiesNamespace(bodies: Record<string, string>, handed: readonly string[] = []) {
  const blobs = new Map<string, { name: string; bytes: Uint8Array }>();
  const reads: string[] = [];
  const index = commitIndexOf(
    Object.entries(bodies).map(([name, body], i) => {
      const blob = String(i).padStart(40, '0');
      const bytes = Buffer.from(`---\nname: ${name}\ndescription: A skill.\n---\n${body}`);
      blobs.set(blob, { name, bytes });
      return oneFileSkill(name, 'A skill.', { blob, size: bytes.length });
    }),
  );
  const ns = buildNamespace(
    'bodies',
    index,
    { repository: 'local:test' },
    async (blob) => {
      reads.push(blobs.get(blob)!.name);
      return blobs.get(blob)!.bytes;
    },
    (blob) => (handed.includes(blobs.get(blob)!.name) ? bodies[blobs.get(blob)!.name] : undefined),
  );
  return { ns, reads };
}

describe('search index build', () => {
  it('indexes the SKILL.md text the indexer handed on without reading those blobs, and reads the others', async () => {
    const { ns, reads } = bodiesNamespace(
      {
        alpha: 'Rotates the signing keys.',
        beta: 'Compacts the event journal.',
        gamma: 'Prunes old snapshots.',
      },
      ['alpha', 'gamma'],
    );
    const index = await buildSkillIndex(ns, buildSnapshot(ns).ordered);
    expect(reads).toEqual(['beta']);
    expect(index.stats.unread).toBe(0);
    const names = (query: string) => index.search(query).map((hit) => hit.served.skill.name);
    expect([names('signing keys'), names('event journal'), names('snapshots')]).toEqual([
      ['alpha'],
      ['beta'],
      ['gamma'],
    ]);
  });

  it('counts a term once for each place it stands in: a body that says it a thousand times ranks as one that says it once', async () => {
    const line = 'Reconcile the ledger balances.\n';
    const { ns } = bodiesNamespace({
      once: line,
      thousand: line.repeat(1000),
      // In a heading it counts apart from the text.
      headed: `${'# Reconcile the ledger balances.\n'.repeat(5)}${line.repeat(5)}`,
      // A fenced heading-like line is text.
      fenced: `# Reconcile the ledger balances.\n\`\`\`\n# Reconcile the ledger balances.\n\`\`\`\n`,
      unfenced: '# Reconcile the ledger balances.\n'.repeat(3),
      // The name and description count twice (ledger: 2 against the body's 1).
      'ledger-balances': 'Nothing here.',
    });
    const scores = new Map(
      (await buildSkillIndex(ns, buildSnapshot(ns).ordered))
        .search('ledger')
        .map((hit) => [hit.served.skill.name, hit.score]),
    );
    expect([scores.get('thousand'), scores.get('unfenced'), scores.get('fenced')]).toEqual([
      scores.get('once'),
      scores.get('once'),
      scores.get('headed'),
    ]);
    expect([
      scores.get('headed')! > scores.get('once')!,
      scores.get('ledger-balances')! > scores.get('once')!,
    ]).toEqual([true, true]);
  });

  it('matches no skill on function words alone, and ranks a query with them as one without', async () => {
    // "use" (in nearly every real description: "Use when…") matches nothing either, though b's body says it.
    const { ns } = bodiesNamespace({
      a: 'Reconcile the ledger.',
      b: 'Use it to close the ledger and the books.',
    });
    const index = await buildSkillIndex(ns, buildSnapshot(ns).ordered);
    const ranked = (query: string) => index.search(query).map((hit) => [hit.served.skill.name, hit.score]);
    expect(ranked('the and of a what is use')).toEqual([]);
    expect(ranked('what are the books of the ledger to use')).toEqual(ranked('books ledger'));
  });

  it('keeps no SKILL.md text alive once indexed, even a word of its own in each', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    // 200 bodies of 64 KiB, each with a long word of its own: a word kept as a slice of its body would keep the
    // body (12.5 MiB in all).
    const bodies = Object.fromEntries(
      Array.from({ length: 200 }, (_, i) => [`s${i}`, `${'filler words\n'.repeat(5000)}Uniquelongword${i}x`]),
    );
    const { ns } = bodiesNamespace(bodies, Object.keys(bodies));
    const ordered = buildSnapshot(ns).ordered;
    gc();
    const before = process.memoryUsage().heapUsed;
    const index = await buildSkillIndex(ns, ordered);
    for (const key of Object.keys(bodies)) delete bodies[key];
    gc();
    expect((process.memoryUsage().heapUsed - before) / 2 ** 20).toBeLessThan(2);
    expect(index.search('uniquelongword7x').map((hit) => hit.served.skill.name)).toEqual(['s7']);
  });
});

describe('skill_search budget', () => {
  it('cuts descriptions in the text and ends the results before they pass the fallback tools budget', async () => {
    // 60 skills whose 1,024-character descriptions all match: 50 of them would be about 80,000 characters.
    const description = (i: number) => `Skill ${i} ${'y'.repeat(1024)}`.slice(0, 1024);
    const index = commitIndexOf(
      Array.from({ length: 60 }, (_, i) =>
        oneFileSkill(`skill-${String(i).padStart(2, '0')}`, description(i)),
      ),
    );
    const ns = buildNamespace('long', index, { repository: 'local:test' }, async () => new Uint8Array());
    const client = await connect(
      createCatalog({ sources: [{ id: 'long', current: ns, retained: [] }], failures: [] }),
    );
    const result = await search(client, { query: 'skill', limit: MAX_SEARCH_LIMIT });
    const { results, total } = result.structuredContent;
    const lines = result.content[0]!.text.split('\n').slice(1);
    const charsOf = (n: number) =>
      lines.slice(0, n).reduce((sum, line) => sum + line.length, 0) +
      results.slice(0, n).reduce((sum, r) => sum + JSON.stringify(r).length, 0);
    expect([total, lines.length, results.length < MAX_SEARCH_LIMIT]).toEqual([60, results.length, true]);
    expect(charsOf(results.length)).toBeLessThanOrEqual(LIST_PAGE_CHARS);
    // One more would have passed it.
    expect(charsOf(results.length) + lines[0]!.length + JSON.stringify(results[0]).length).toBeGreaterThan(
      LIST_PAGE_CHARS,
    );
    expect(
      lines[0]!.endsWith(
        `: ${results[0]!.description.slice(0, SEARCH_LINE_DESCRIPTION_CHARS - 1)}… [matched name (skill), description (skill)]`,
      ),
    ).toBe(true);
  });
});

/** A namespace of one-file skills (name → [description, body]) of `source` at `commit` made at `commitTime`. */
function skillsNamespace(
  source: string,
  skills: Record<string, readonly [string, string]>,
  {
    commit = 'a'.repeat(40),
    commitTime = '2024-01-01T00:00:00.000Z',
    ref = undefined as string | undefined,
  } = {},
) {
  const blobs = new Map<string, Uint8Array>();
  const indexed = Object.entries(skills).map(([name, [description, body]], i) => {
    const blob = `${source.length}${i}`.padStart(40, '0');
    blobs.set(blob, Buffer.from(`---\nname: ${name}\ndescription: ${description}\n---\n${body}`));
    return oneFileSkill(name, description, { blob });
  });
  const index = { ...commitIndexOf(indexed), commit, commitTime };
  const origin = ref === undefined ? { repository: 'local:test' } : { repository: 'local:test', ref };
  return buildNamespace(source, index, origin, async (blob) => blobs.get(blob)!);
}

/** Two sources: a small one with skills `pdf` and `writing-plans`, a larger one whose skills say "pdf" (and, with
 * `samePdf`, one named `pdf` too). */
function twoSources(samePdf = true) {
  const small = skillsNamespace('small', {
    pdf: ['Read, merge and split documents.', 'Use pypdf.'],
    'writing-plans': ['Before touching code, for a multi-step task.', 'Steps.'],
  });
  const large = skillsNamespace(
    'large',
    Object.fromEntries([
      ...(samePdf ? [['pdf', ['Another source serving a skill of the same name.', 'Nothing else.']]] : []),
      ...Array.from({ length: 40 }, (_, i) => [
        `report-${i}`,
        [`Writes report ${i} as a PDF: plans, writing, pdf pdf.`, 'Export to pdf. Writing plans for pdf.'],
      ]),
    ]),
  );
  return { small, large };
}

describe('one ranking across sources', () => {
  it('ranks a skill first when the query is its name or its name as words, and every source serving that name', async () => {
    const { small, large } = twoSources();
    const client = await connect(
      createCatalog({
        sources: [
          { id: 'small', current: small, retained: [] },
          { id: 'large', current: large, retained: [] },
        ],
        failures: [],
      }),
    );
    const first = async (query: string, n: number) =>
      (await search(client, { query })).structuredContent.results
        .slice(0, n)
        .map((r) => [r.name, r.source, r.matched.exactName]);
    expect(await first('pdf', 3)).toEqual([
      ['pdf', 'large', true],
      ['pdf', 'small', true],
      [expect.stringMatching(/^report-/), 'large', undefined],
    ]);
    expect(await first('writing plans', 1)).toEqual([['writing-plans', 'small', true]]);
    expect(await first('Writing_Plans', 1)).toEqual([['writing-plans', 'small', true]]);
    const text = (await search(client, { query: 'writing-plans', limit: 1 })).content[0]!.text;
    expect(text).toContain(
      ': Before touching code, for a multi-step task. [the query is its name; matched name (writing, plans, writing plans)]',
    );
  });

  it("ranks a rare word of the query in a skill's description above two as rare in another's body", async () => {
    const ns = skillsNamespace('desc', {
      bookkeeping: ['Files invoices.', 'Steps.'],
      notes: ['Keeps notes.', 'Copy the drive.'],
      a: ['Other.', 'Nothing.'],
      b: ['Other.', 'Nothing.'],
    });
    const hits = await searchNamespaces([ns], 'copy invoices to the drive');
    expect(hits.map((hit) => [hit.served.skill.name, hit.matched()])).toEqual([
      ['bookkeeping', { description: ['invoices'] }],
      ['notes', { text: ['copy', 'drive'] }],
    ]);
  });

  it("finds a word's other forms in names and descriptions, a few letters apart, and not in bodies", async () => {
    const ns = skillsNamespace('variants', {
      'systematic-debugging': ['Use when encountering any test failure.', 'Steps.'],
      planner: ['Writes plans.', 'A failure here is logged.'],
      'entry-points': ['Lists externally callable functions.', 'Steps.'],
      hooks: ['Registers a callback.', 'Steps.'],
      'image-enhancer': ['Improves sharpness.', 'Steps.'],
    });
    const found = async (query: string) =>
      (await searchNamespaces([ns], query)).map((hit) => [hit.served.skill.name, hit.matched()]);
    // fails: fail, failure: failur (a body's `failure` is not looked at); call: callabl, not callback (4 letters more).
    expect(await found('the build fails')).toEqual([['systematic-debugging', { description: ['fails'] }]]);
    expect(await found('who can call this')).toEqual([['entry-points', { description: ['call'] }]]);
    // sharper: sharp (2 letters fewer).
    expect(await found('sharper')).toEqual([['image-enhancer', { description: ['sharper'] }]]);
  });

  it('scores with the statistics of every namespace searched, as one index holding them all would', async () => {
    const { small, large } = twoSources(false);
    const both = skillsNamespace('both', {
      pdf: ['Read, merge and split documents.', 'Use pypdf.'],
      'writing-plans': ['Before touching code, for a multi-step task.', 'Steps.'],
      ...Object.fromEntries(
        Array.from({ length: 40 }, (_, i) => [
          `report-${i}`,
          [`Writes report ${i} as a PDF: plans, writing, pdf pdf.`, 'Export to pdf. Writing plans for pdf.'],
        ]),
      ),
    });
    const apart = (await searchNamespaces([small, large], 'merge plans for a multi-step report')).map(
      (hit) => [hit.served.skill.name, hit.score],
    );
    const together = (await searchNamespaces([both], 'merge plans for a multi-step report')).map((hit) => [
      hit.served.skill.name,
      hit.score,
    ]);
    expect(apart).toEqual(together);
    expect(together.length).toBe(42);
  });

  it('gives one result per skill of a refs: source, its newest version first, the others named as versions', async () => {
    const skill = { refunds: ['Refund a customer order.', 'Policy.'] as const };
    const v1 = skillsNamespace('pol.v1', skill, {
      commit: '1'.repeat(40),
      commitTime: '2024-01-01T00:00:00.000Z',
      ref: 'refs/tags/v1',
    });
    const v2 = skillsNamespace('pol.v2', skill, {
      commit: '2'.repeat(40),
      commitTime: '2025-01-01T00:00:00.000Z',
      ref: 'refs/tags/v2',
    });
    const client = await connect(
      createCatalog({
        sources: [
          { id: 'pol.v1', group: 'pol', current: v1, retained: [] },
          { id: 'pol.v2', group: 'pol', current: v2, retained: [] },
        ],
        failures: [],
      }),
    );
    const result = await search(client, { query: 'refund an order' });
    expect(result.structuredContent.total).toBe(1);
    expect(result.structuredContent.results.map((r) => [r.source, r.ref, r.versions])).toEqual([
      [
        'pol.v2',
        'refs/tags/v2',
        [
          {
            uri: `skill://pol.v1/${'1'.repeat(40)}/refunds/SKILL.md`,
            source: 'pol.v1',
            ref: 'refs/tags/v1',
            commit: '1'.repeat(40),
          },
        ],
      ],
    ]);
    expect(result.content[0]!.text.split('\n')[1]!.endsWith(' (also refs/tags/v1)')).toBe(true);
  });

  it('reveals nothing of a source the caller may not see: the same results, scores, total and text as without it', async () => {
    const { small, large } = twoSources();
    const served = createCatalog({
      sources: [
        { id: 'small', current: small, retained: [] },
        { id: 'large', current: large, retained: [] },
      ],
      failures: [],
    });
    const alone = createCatalog({ sources: [{ id: 'small', current: small, retained: [] }], failures: [] });
    const seen = await connect(visibleCatalog(served, onlySources(['small'])) as Catalog);
    const only = await connect(alone);
    for (const query of ['pdf', 'writing plans for a report', 'report', 'merge'])
      expect(await search(seen, { query })).toEqual(await search(only, { query }));
    for (const query of ['pdf', 'report'])
      expect(await pageSearch(createServingOwner(served), onlySources(['small']), query)).toEqual(
        await pageSearch(createServingOwner(alone), EVERY_SOURCE, query),
      );
  });
});
