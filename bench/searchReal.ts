/**
 * Search quality over real public catalogs (issue 37): top-1, top-5 and MRR of skill_search's ranking on
 * bench/searchQueries.ts's queries, per catalog and per kind of query, beside BM25 over name and description; and
 * every skill of anthropics/skills and obra/superpowers searched by its own name (as written, and as words) beside
 * the other catalogs, where it should come first.
 *
 * The catalogs are bare git repositories named `<owner>+<name>` in a directory (default `.skillpin/catalogs/`); one
 * that is absent is skipped with a line saying so (CI never runs this). The measure set is printed only with
 * `--measure` (it is not looked at while tuning).
 * Usage: npx tsx bench/searchReal.ts [catalogs-dir] [--measure]
 */
import type { Namespace } from '../src/catalog/index.ts';
import { buildSnapshot } from '../src/mcp/snapshot.ts';
import { searchNamespaces } from '../test/helpers/search.ts';
import { nameAndDescription, type Ranker } from './baseline.ts';
import { DEFAULT_CATALOGS, loadCatalog, type RealCatalog } from './realCatalogs.ts';
import { MEASURE, QUERY_CATALOGS, type QueryKind, type RealQuery, TUNE } from './searchQueries.ts';

/** Skill names, best first, as one ranker answers a query. */

const nameAndDescriptionOf = (ns: Namespace): Ranker => nameAndDescription(buildSnapshot(ns).ordered);

const ours =
  (namespaces: readonly Namespace[]): Ranker =>
  async (query) =>
    (await searchNamespaces(namespaces, query)).map((hit) => hit.served.skill.name);

interface Scores {
  top1: number;
  top5: number;
  mrr: number;
  n: number;
}

async function score(queries: readonly RealQuery[], rank: Ranker, misses?: string[]): Promise<Scores> {
  const s = { top1: 0, top5: 0, mrr: 0, n: queries.length };
  for (const q of queries) {
    const ranked = await rank(q.query);
    const position = ranked.findIndex((name) => q.expect.includes(name)) + 1;
    if (position === 1) s.top1++;
    else misses?.push(`    ${position === 0 ? '-' : position} ${q.query} → ${ranked.slice(0, 3).join(', ')}`);
    if (position >= 1 && position <= 5) s.top5++;
    if (position >= 1) s.mrr += 1 / position;
  }
  return { top1: s.top1 / s.n, top5: s.top5 / s.n, mrr: s.mrr / s.n, n: s.n };
}

const fmt = (label: string, s: Scores) =>
  `  ${label.padEnd(44)} top-1 ${s.top1.toFixed(3)}  top-5 ${s.top5.toFixed(3)}  MRR ${s.mrr.toFixed(3)}  (${s.n})`;

const KINDS: readonly QueryKind[] = ['named', 'paraphrase', 'body'];

/** One query set's figures: per catalog (each served alone), per kind, and over all, for ours and the baseline. */
async function quality(label: string, queries: readonly RealQuery[], loaded: Map<string, RealCatalog>) {
  console.log(`${label}:`);
  const present = queries.filter((q) => loaded.has(q.catalog));
  const rankers = new Map<string, { ours: Ranker; base: Ranker }>();
  for (const [name, { ns }] of loaded)
    rankers.set(name, { ours: ours([ns]), base: nameAndDescriptionOf(ns) });
  const routed = (pick: 'ours' | 'base', qs: readonly RealQuery[], misses?: string[]) =>
    Promise.all(qs.map((q) => score([q], rankers.get(q.catalog)![pick], misses)));
  const sum = (parts: Scores[]): Scores => {
    const n = parts.reduce((a, p) => a + p.n, 0);
    const avg = (key: 'top1' | 'top5' | 'mrr') => parts.reduce((a, p) => a + p[key] * p.n, 0) / n;
    return { top1: avg('top1'), top5: avg('top5'), mrr: avg('mrr'), n };
  };
  const groups: Array<[string, readonly RealQuery[]]> = [
    ...QUERY_CATALOGS.map((c): [string, RealQuery[]] => [c, present.filter((q) => q.catalog === c)]),
    ...KINDS.map((k): [string, RealQuery[]] => [`kind: ${k}`, present.filter((q) => q.kind === k)]),
    ['all', present],
  ];
  const misses: string[] = [];
  for (const [group, qs] of groups) {
    if (qs.length === 0) continue;
    const verbose = process.argv.includes('--misses') && !group.startsWith('kind') && group !== 'all';
    console.log(fmt(`${group}, skill_search`, sum(await routed('ours', qs, verbose ? misses : undefined))));
    if (verbose) console.log(misses.splice(0).join('\n'));
    console.log(fmt(`${group}, BM25 name + description`, sum(await routed('base', qs))));
  }
}

/**
 * Every skill of `named` searched by its name as written (`writing-plans`) and as words (`writing plans`) with
 * every loaded catalog served: first when some source serving that name is first, and every source serving it
 * comes before any other skill.
 */
async function names(named: readonly RealCatalog[], served: readonly Namespace[], label: string) {
  let queries = 0;
  let first = 0;
  let allFirst = 0;
  const misses: string[] = [];
  for (const { ns } of named)
    for (const skill of ns.skills)
      for (const query of [skill.name, skill.name.replaceAll('-', ' ')]) {
        const hits = await searchNamespaces(served, query);
        const serving = hits.filter((hit) => hit.served.skill.name === skill.name).length;
        const lead = hits.findIndex((hit) => hit.served.skill.name !== skill.name);
        queries++;
        if (hits[0]?.served.skill.name === skill.name) first++;
        else misses.push(`${query} (${hits.findIndex((hit) => hit.served.skill.name === skill.name) + 1})`);
        if (serving > 0 && (lead === -1 || lead >= serving)) allFirst++;
      }
  console.log(
    `  ${label}: ${queries} queries, first ${first} (${((100 * first) / queries).toFixed(0)}%), every source serving the name first ${allFirst} (${((100 * allFirst) / queries).toFixed(0)}%)${misses.length > 0 ? `; missed: ${misses.slice(0, 12).join(', ')}` : ''}`,
  );
}

const dir = process.argv.slice(2).find((arg) => !arg.startsWith('--')) ?? DEFAULT_CATALOGS;
const ALSO = [
  'alirezarezvani+claude-skills',
  'sickn33+antigravity-awesome-skills',
  'openai+skills',
  'vercel-labs+agent-skills',
];
const loaded = new Map<string, RealCatalog>();
for (const name of [...QUERY_CATALOGS, ...ALSO]) {
  const catalog = await loadCatalog(dir, name);
  if (catalog !== undefined) loaded.set(name, catalog);
}
const forQueries = new Map(
  [...loaded].filter(([name]) => (QUERY_CATALOGS as readonly string[]).includes(name)),
);
await quality('tuning set', TUNE, forQueries);
if (process.argv.includes('--measure')) await quality('measure set', MEASURE, forQueries);
const named = ['anthropics+skills', 'obra+superpowers'].flatMap((n) => loaded.get(n) ?? []);
if (named.length > 0) {
  console.log('names: anthropics/skills and obra/superpowers searched by their own names');
  const beside = loaded.get('alirezarezvani+claude-skills');
  if (beside !== undefined)
    await names(
      named,
      [...named, beside].map((c) => c.ns),
      'beside alirezarezvani (239 skills)',
    );
  await names(
    named,
    [...loaded.values()].map((c) => c.ns),
    `beside every catalog (${loaded.size})`,
  );
}
for (const catalog of loaded.values()) await catalog.close();
