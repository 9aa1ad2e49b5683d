/**
 * Search benchmark, everything in one run (issue 26):
 *   quality  top-1, top-5 and MRR of skill_search's ranking on the paraphrased queries of bench/searchCatalog.ts
 *            (a 504-skill catalog modelled on real ones, and bench/synthetic.ts's 1000 skills read through git),
 *            against two baselines: the every-word filter skill_list had (name and description contain every
 *            word, sorted by URI) and BM25 over name and description alone (MiniSearch on those two fields, the same
 *            terms, each counted once per field as ours counts it once per place);
 *   speed    p50 and p99 of one search in-process at 5,000 served skills (the realistic catalog ten times over): the
 *            ranking alone, and the skill_search tool called through an MCP client in the same process;
 *   build    building the index of bench/synthetic.ts's 5,000 skills as sync does when it publishes the commit (the
 *            SKILL.md text the indexer read) against indexing that commit (the cli backend, nothing cached, git's
 *            CPU counted), and after a restart (every SKILL.md read through git again);
 *   memory   heap held by the search index against the heap
 *            held by the namespace's serving snapshot, both measured alike: heap growth (typed arrays' memory
 *            included, where the index's postings are), after full collections, of building each from the live
 *            namespace (the indexed skills the namespace holds, which the snapshot serves from, are in neither
 *            figure). The snapshot is measured whole, its folder map (which it builds at the
 *            first read that needs one) included, as it was before that map was built on demand.
 * Usage: npx tsx bench/search.ts [skills=5000]
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import { nameAndDescription, type Ranker } from './baseline.ts';
import { buildNamespace, createCatalog, type Namespace } from '../src/catalog/index.ts';
import { blobAccess, openLocalRepository, walkCommit } from '../src/git/index.ts';
import {
  type CommitIndex,
  INDEX_VERSION,
  indexCommit,
  newIndexCache,
  skillMdBodies,
} from '../src/index/index.ts';
import { buildSkillIndex, type SkillIndex } from '../src/mcp/search.ts';
import { searchNamespaces } from '../test/helpers/search.ts';
import { createServerFactory } from '../src/mcp/server.ts';
import { buildSnapshot, type ServedSkill } from '../src/mcp/snapshot.ts';
import { silentLogger } from '../src/shared/logger.ts';
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

/** The synthetic repository's commit, indexed as sync indexes it. */
async function gitNamespace(skills: number): Promise<{ ns: Namespace; close(): Promise<void> }> {
  const repo = syntheticRepo(workDir, skills, 5);
  const git = await openLocalRepository(repo.gitdir, { backend: 'cli' });
  const tree = await walkCommit(git, repo.base);
  const cache = newIndexCache();
  const index = await indexCommit({ ...tree, ...blobAccess(git), cache });
  const ns = buildNamespace(
    'synthetic',
    index,
    { repository: 'local:synthetic' },
    blobAccess(git).readBlob,
    skillMdBodies(cache),
  );
  return { ns, close: () => git.close() };
}

/** skill_list's former filter: name or description contains every word, sorted by URI. */
const everyWord =
  (skills: readonly ServedSkill[]): Ranker =>
  (query) => {
    const words = query.toLowerCase().split(/\s+/).filter(Boolean);
    return skills
      .filter((s) => words.every((w) => `${s.skill.name} ${s.description}`.toLowerCase().includes(w)))
      .map((s) => s.skill.name);
  };

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
    'baseline: every-word filter': (ns: Namespace) => everyWord(buildSnapshot(ns).ordered),
    'baseline: BM25 name + description': (ns: Namespace) => nameAndDescription(buildSnapshot(ns).ordered),
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

/** CPU milliseconds of this process's children that have ended (git's processes, once closed); 0 off Linux. */
function childCpu(): number {
  try {
    // Fields 16 and 17 of /proc/self/stat (after the parenthesised command): cutime and cstime, in clock ticks.
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[13]) + Number(fields[14])) * 10;
  } catch {
    return 0;
  }
}

interface Timing {
  wall: number;
  /** This process's CPU. */
  cpu: number;
  /** CPU of the git processes that ended meanwhile (10 ms resolution). */
  git: number;
}

/**
 * Milliseconds of wall time and of CPU time (what a loaded machine's other work leaves out): ours and git's.
 * `collectFirst`: the garbage of what ran before is collected first, not charged to this run (for the builds; the
 * searches are timed one after another with the garbage they leave, as a server runs them).
 */
async function timed(run: () => Promise<unknown>, collectFirst = false): Promise<Timing> {
  if (collectFirst) gc();
  const cpu = process.cpuUsage();
  const children = childCpu();
  const started = performance.now();
  await run();
  const used = process.cpuUsage(cpu);
  return {
    wall: performance.now() - started,
    cpu: (used.user + used.system) / 1000,
    git: childCpu() - children,
  };
}

/** p50 and p99 of `calls` timed one after another (wall and CPU), as a line. */
async function percentiles(calls: Array<() => Promise<unknown>>): Promise<string> {
  const walls: number[] = [];
  const cpus: number[] = [];
  for (const call of calls) {
    const { wall, cpu } = await timed(call);
    walls.push(wall);
    cpus.push(cpu);
  }
  walls.sort((a, b) => a - b);
  cpus.sort((a, b) => a - b);
  const ms = (sorted: number[], p: number) => percentile(sorted, p).toFixed(2);
  return `${calls.length} calls: wall p50 ${ms(walls, 0.5)} ms, p99 ${ms(walls, 0.99)} ms; CPU p50 ${ms(cpus, 0.5)} ms, p99 ${ms(cpus, 0.99)} ms`;
}

/**
 * One search at 5,040 served skills: the ranking alone (searchNamespaces), and the skill_search tool called through
 * an MCP client connected in the same process (the SDK's request handling, input and output schemas, the text
 * answer: client and server both counted, so an upper bound of the server's part).
 */
async function speed(): Promise<Namespace> {
  const catalog = realisticCatalog();
  const skills = Array.from({ length: 10 }, (_, copy) =>
    catalog.map((s) => ({ ...s, name: `${s.name}-${copy}` })),
  ).flat();
  const ns = memoryNamespace('big', skills);
  const client = new Client({ name: 'bench', version: '1.0.0' });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const served = createCatalog({ sources: [{ id: 'big', current: ns, retained: [] }], failures: [] });
  await createServerFactory({ catalog: served, logger: silentLogger() })().connect(serverSide);
  await client.connect(clientSide);
  await client.listTools();
  const tool = (query: string) => client.callTool({ name: 'skill_search', arguments: { query } });
  await searchNamespaces([ns], 'warm up');
  const queries = QUERIES.filter((q) => q.catalog === 'realistic').map((q) => q.query);
  for (let i = 0; i < 3; i++)
    for (const q of queries) {
      await searchNamespaces([ns], q);
      await tool(q);
    }
  const rounds = Array.from({ length: 20 }, () => queries).flat();
  const ranking = await percentiles(rounds.map((q) => () => searchNamespaces([ns], q)));
  const called = await percentiles(rounds.map((q) => () => tool(q)));
  await client.close();
  const load = `load average ${loadavg()[0]!.toFixed(1)} on ${availableParallelism()} cores`;
  console.log(`speed: one search over ${skills.length} served skills (target p99 <= 20 ms; ${load}):`);
  console.log(`  ranking (searchNamespaces), ${ranking}`);
  console.log(`  skill_search tool call through an in-process MCP client, ${called}`);
  return ns;
}

/** A namespace's serving snapshot whole: its folder map (built at the first read that needs it) included. */
function wholeSnapshot(ns: Namespace) {
  const snapshot = buildSnapshot(ns);
  void snapshot.dirs;
  return snapshot;
}

/** What the heap holds, typed arrays' memory (outside the V8 heap) included: the search index's postings are there. */
const heldBytes = () => {
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  return heapUsed + arrayBuffers;
};

async function heapOf<T>(make: () => Promise<T> | T): Promise<{ value: T; mib: number }> {
  // Twice: a namespace's WeakMap entries (its snapshot, its index) go a collection after the namespace.
  gc();
  gc();
  const before = heldBytes();
  const value = await make();
  gc();
  return { value, mib: (heldBytes() - before) / 1024 / 1024 };
}

const RUNS = 3;
const medianOf = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/**
 * Indexing the commit against building its search index (wall and CPU, the median of RUNS each, every run with
 * nothing cached: a new repository handle and index cache), and the heap each part holds. Indexing's CPU counts
 * git's processes (the cli backend's cat-file and ls-tree: they are part of indexing), ours alone is shown too.
 * The search index is built as sync builds it when it publishes a commit it indexed (each SKILL.md's text from the
 * index cache, Namespace.skillMdBody), and as after a restart from the persisted index (each SKILL.md read again
 * through git, a handle opened and closed in the run, its CPU counted).
 */
async function buildAndMemory(skills: number): Promise<void> {
  const repo = syntheticRepo(workDir, skills, 5);
  const indexings: Timing[] = [];
  let index: CommitIndex | undefined;
  let cache = newIndexCache();
  for (let run = 0; run < RUNS; run++) {
    cache = newIndexCache();
    indexings.push(
      await timed(async () => {
        const git = await openLocalRepository(repo.gitdir, { backend: 'cli' });
        const tree = await walkCommit(git, repo.base);
        index = await indexCommit({ ...tree, ...blobAccess(git), cache });
        await git.close();
      }, true),
    );
  }
  const git = await openLocalRepository(repo.gitdir, { backend: 'cli' });
  const ns = buildNamespace(
    'synthetic',
    index!,
    { repository: 'local:synthetic' },
    blobAccess(git).readBlob,
    skillMdBodies(cache),
  );
  const snapshot = await heapOf(() => wholeSnapshot(ns));
  // Measured first, as publishing builds it (its word memo is dropped with the build). Only the figure is kept: that
  // index is not live while the builds are timed.
  const held = { mib: (await heapOf(() => buildSkillIndex(ns, snapshot.value.ordered))).mib };
  const builds: Timing[] = [];
  let built: SkillIndex | undefined;
  for (let run = 0; run < RUNS; run++)
    builds.push(
      await timed(async () => {
        built = await buildSkillIndex(ns, snapshot.value.ordered);
      }, true),
    );
  const rereads: Timing[] = [];
  for (let run = 0; run < RUNS; run++)
    rereads.push(
      await timed(async () => {
        const reader = await openLocalRepository(repo.gitdir, { backend: 'cli' });
        const restored = buildNamespace(
          'synthetic',
          index!,
          { repository: 'local:synthetic' },
          blobAccess(reader).readBlob,
        );
        const reread = await buildSkillIndex(restored, snapshot.value.ordered);
        if (reread.stats.unread !== 0) throw new Error('a SKILL.md was not read');
        await reader.close();
      }, true),
    );
  await git.close();
  const pct = (a: number, b: number) => `${((100 * a) / b).toFixed(1)}%`;
  const median = (timings: Timing[], of: (t: Timing) => number) => medianOf(timings.map(of));
  const [iw, ic, ig] = [
    median(indexings, (t) => t.wall),
    median(indexings, (t) => t.cpu + t.git),
    median(indexings, (t) => t.cpu),
  ];
  const [bw, bc] = [median(builds, (t) => t.wall), median(builds, (t) => t.cpu)];
  const [rw, rc] = [median(rereads, (t) => t.wall), median(rereads, (t) => t.cpu + t.git)];
  console.log(
    `build: ${skills} skills x 5 files, median of ${RUNS}: indexing the commit (cli backend, nothing cached) ${iw.toFixed(0)} ms wall, ${ic.toFixed(0)} ms CPU with git's (${ig.toFixed(0)} ms ours alone)`,
  );
  console.log(
    `  search index (${built!.stats.terms} terms) as published after indexing (SKILL.md text from the index cache): ${bw.toFixed(0)} ms wall = ${pct(bw, iw)}, ${bc.toFixed(0)} ms CPU = ${pct(bc, ic)} (${pct(bc, ig)} of ours alone) (target <= 15%)`,
  );
  console.log(
    `  search index after a restart (every SKILL.md read through git again): ${rw.toFixed(0)} ms wall = ${pct(rw, iw)}, ${rc.toFixed(0)} ms CPU with git's = ${pct(rc, ic)}`,
  );
  console.log(
    `memory: ${skills} skills x 5 files: serving snapshot ${snapshot.mib.toFixed(1)} MiB heap; search index ${held.mib.toFixed(1)} MiB = ${pct(held.mib, snapshot.mib)} (target <= 25%)`,
  );
}

/** The same for the realistic catalog ten times over (one file a skill, varied words). */
async function realisticMemory(): Promise<void> {
  const catalog = realisticCatalog();
  const skills = Array.from({ length: 10 }, (_, copy) =>
    catalog.map((s) => ({ ...s, name: `${s.name}-${copy}` })),
  ).flat();
  const ns = memoryNamespace('memory', skills);
  const snapshot = await heapOf(() => wholeSnapshot(ns));
  const held = await heapOf(() => buildSkillIndex(ns, snapshot.value.ordered));
  console.log(
    `memory: ${skills.length} realistic skills x 1 file: serving snapshot ${snapshot.mib.toFixed(1)} MiB heap; search index ${held.mib.toFixed(1)} MiB = ${((100 * held.mib) / snapshot.mib).toFixed(1)}% (target <= 25%)`,
  );
}

const skills = Number(process.argv[2] ?? 5000);
const load = () =>
  loadavg()
    .map((n) => n.toFixed(2))
    .join(' ');
console.log(`load average ${load()} on ${availableParallelism()} cores`);
const synthetic1000 = await gitNamespace(1000);
await quality(synthetic1000.ns);
await synthetic1000.close();
await realisticMemory();
await speed();
await buildAndMemory(skills);
console.log(`load average ${load()} at the end`);
