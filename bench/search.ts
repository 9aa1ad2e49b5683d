/**
 * Search benchmark, everything in one run (issue 26):
 *   quality  top-1, top-5 and MRR of skill_search's ranking on the paraphrased queries of bench/searchCatalog.ts
 *            (a 504-skill catalog modelled on real ones, and bench/synthetic.ts's 1000 skills read through git),
 *            against two baselines: the every-word filter skill_list had (name and description contain every
 *            word, sorted by URI) and BM25 over name and description alone (MiniSearch on those two fields, the same
 *            words and stemming);
 *   speed    p50 and p99 of one search in-process at 5,000 served skills (the realistic catalog ten times over);
 *   build    building the index of bench/synthetic.ts's 5,000 skills (reading every SKILL.md through git) against
 *            indexing that commit (the cli backend, nothing cached);
 *   memory   heap held by the search index against the heap held by the namespace's serving snapshot.
 * Usage: npx tsx bench/search.ts [skills=5000]
 */
import { createHash } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import MiniSearch from 'minisearch';
import { buildNamespace, type Namespace } from '../src/catalog/index.ts';
import { blobAccess, openLocalRepository, walkCommit } from '../src/git/index.ts';
import { type CommitIndex, INDEX_VERSION, indexCommit, newIndexCache } from '../src/index/index.ts';
import { buildSkillIndex, searchNamespaces, searchTerm, searchWords } from '../src/mcp/search.ts';
import { snapshotOf, type ServedSkill } from '../src/mcp/snapshot.ts';
import { type CatalogSkill, QUERIES, realisticCatalog, type SearchQuery } from './searchCatalog.ts';
import { syntheticRepo } from './synthetic.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const workDir = path.resolve(here, '..', '.skillpin', 'bench');
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const COMMIT = 'e'.repeat(40);

/** A namespace serving `skills` from memory, each SKILL.md with its frontmatter, as a commit would. */
function memoryNamespace(source: string, skills: readonly CatalogSkill[]): Namespace {
  const blobs = new Map<string, Uint8Array>();
  const index: CommitIndex = {
    version: INDEX_VERSION,
    commit: COMMIT,
    commitTime: '2026-01-01T00:00:00.000Z',
    tree: 'f'.repeat(40),
    problems: [],
    skills: skills.map(({ name, description, body }) => {
      const bytes = Buffer.from(
        `---\nname: ${name}\ndescription: ${JSON.stringify(description)}\n---\n\n${body}`,
      );
      const blob = createHash('sha1').update(bytes).digest('hex');
      blobs.set(blob, bytes);
      const digest = `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
      const file = { path: `skills/${name}/SKILL.md`, relPath: 'SKILL.md', blob, size: bytes.length, digest };
      const dir = `skills/${name}`;
      return {
        name,
        dir,
        servedDir: dir,
        frontmatter: { name, description },
        files: [file],
        bytes: bytes.length,
      };
    }),
  };
  return buildNamespace(source, index, { repository: 'local:bench' }, async (blob) => blobs.get(blob)!);
}

/** The synthetic repository's commit, indexed as sync indexes it; how long that took. */
async function gitNamespace(
  skills: number,
): Promise<{ ns: Namespace; indexMs: number; close(): Promise<void> }> {
  const repo = syntheticRepo(workDir, skills, 5);
  const git = await openLocalRepository(repo.gitdir, { backend: 'cli' });
  const started = performance.now();
  const tree = await walkCommit(git, repo.base);
  const index = await indexCommit({ ...tree, ...blobAccess(git), cache: newIndexCache() });
  const indexMs = performance.now() - started;
  const { readBlob } = blobAccess(git);
  return {
    ns: buildNamespace('synthetic', index, { repository: 'local:synthetic' }, readBlob),
    indexMs,
    close: () => git.close(),
  };
}

type Ranker = (query: string) => Promise<string[]> | string[];

/** skill_list's former filter: name or description contains every word, sorted by URI. */
const everyWord =
  (skills: readonly ServedSkill[]): Ranker =>
  (query) => {
    const words = query.toLowerCase().split(/\s+/).filter(Boolean);
    return skills
      .filter((s) => words.every((w) => `${s.skill.name} ${s.description}`.toLowerCase().includes(w)))
      .map((s) => s.skill.name);
  };

/** BM25 over name and description alone. */
function nameAndDescription(skills: readonly ServedSkill[]): Ranker {
  const index = new MiniSearch({
    fields: ['name', 'description'],
    tokenize: searchWords,
    processTerm: searchTerm,
  });
  index.addAll(skills.map((s, id) => ({ id, name: s.skill.name, description: s.description })));
  return (query) => index.search(query).map((r) => skills[r.id as number]!.skill.name);
}

const ours =
  (ns: Namespace): Ranker =>
  async (query) =>
    (await searchNamespaces([ns], query)).map((hit) => hit.served.skill.name);

interface Scores {
  top1: number;
  top5: number;
  mrr: number;
  n: number;
}

async function score(queries: readonly SearchQuery[], rank: (q: SearchQuery) => Ranker): Promise<Scores> {
  const s = { top1: 0, top5: 0, mrr: 0, n: queries.length };
  for (const q of queries) {
    const position = (await rank(q)(q.query)).findIndex((name) => q.expect.includes(name)) + 1;
    if (position === 1) s.top1++;
    if (position >= 1 && position <= 5) s.top5++;
    if (position >= 1) s.mrr += 1 / position;
  }
  return { top1: s.top1 / s.n, top5: s.top5 / s.n, mrr: s.mrr / s.n, n: s.n };
}

const fmt = (label: string, s: Scores) =>
  `  ${label.padEnd(38)} top-1 ${s.top1.toFixed(3)}  top-5 ${s.top5.toFixed(3)}  MRR ${s.mrr.toFixed(3)}  (${s.n} queries)`;

async function quality(synthetic: Namespace): Promise<void> {
  const namespaces = { realistic: memoryNamespace('realistic', realisticCatalog()), synthetic };
  const rankers = {
    'skill_search (name, description, body)': (ns: Namespace) => ours(ns),
    'baseline: every-word filter': (ns: Namespace) => everyWord(snapshotOf(ns).ordered),
    'baseline: BM25 name + description': (ns: Namespace) => nameAndDescription(snapshotOf(ns).ordered),
  };
  for (const subset of ['all', 'realistic', 'synthetic'] as const) {
    const queries = QUERIES.filter((q) => subset === 'all' || q.catalog === subset);
    console.log(`quality, ${subset === 'all' ? 'every query' : `${subset} catalog`}:`);
    for (const [label, make] of Object.entries(rankers)) {
      const built = new Map<string, Ranker>();
      const rankerOf = (q: SearchQuery) => {
        let r = built.get(q.catalog);
        if (r === undefined) built.set(q.catalog, (r = make(namespaces[q.catalog])));
        return r;
      };
      console.log(fmt(label, await score(queries, rankerOf)));
    }
  }
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;

async function speed(): Promise<void> {
  const catalog = realisticCatalog();
  const skills = Array.from({ length: 10 }, (_, copy) =>
    catalog.map((s) => ({ ...s, name: `${s.name}-${copy}` })),
  ).flat();
  const ns = memoryNamespace('big', skills);
  await searchNamespaces([ns], 'warm up');
  const queries = QUERIES.filter((q) => q.catalog === 'realistic').map((q) => q.query);
  for (let i = 0; i < 3; i++) for (const q of queries) await searchNamespaces([ns], q);
  const times: number[] = [];
  for (let i = 0; i < 20; i++)
    for (const q of queries) {
      const started = performance.now();
      await searchNamespaces([ns], q);
      times.push(performance.now() - started);
    }
  times.sort((a, b) => a - b);
  console.log(
    `speed: one search over ${skills.length} served skills, ${times.length} calls: p50 ${percentile(times, 0.5).toFixed(2)} ms, p99 ${percentile(times, 0.99).toFixed(2)} ms (target p99 <= 5 ms)`,
  );
}

async function heapOf<T>(make: () => Promise<T> | T): Promise<{ value: T; mib: number }> {
  gc();
  const before = process.memoryUsage().heapUsed;
  const value = await make();
  gc();
  return { value, mib: (process.memoryUsage().heapUsed - before) / 1024 / 1024 };
}

async function buildAndMemory(git: { ns: Namespace; indexMs: number }, skills: number): Promise<void> {
  const snapshot = await heapOf(() => snapshotOf(git.ns));
  const index = await heapOf(() => buildSkillIndex(git.ns, snapshot.value.ordered));
  const { stats } = index.value;
  console.log(
    `build: ${skills} skills: indexing the commit (cli backend, nothing cached) ${git.indexMs.toFixed(0)} ms; search index ${stats.buildMs.toFixed(0)} ms (${stats.terms} terms, ${stats.unread} unread) = ${((100 * stats.buildMs) / git.indexMs).toFixed(1)}% (target <= 15%)`,
  );
  console.log(
    `memory: serving snapshot ${snapshot.mib.toFixed(1)} MiB heap; search index ${index.mib.toFixed(1)} MiB = ${((100 * index.mib) / snapshot.mib).toFixed(1)}% (target <= 25%)`,
  );
}

const skills = Number(process.argv[2] ?? 5000);
const synthetic1000 = await gitNamespace(1000);
await quality(synthetic1000.ns);
await synthetic1000.close();
await speed();
const big = await gitNamespace(skills);
await buildAndMemory(big, skills);
await big.close();
