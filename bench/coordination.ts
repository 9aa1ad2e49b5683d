/**
 * Replicas coordinated through Redis (a real redis-server on a loopback port), in this process, real clocks, one
 * markdown table at the end:
 * - the remote's ref listings per 20 s with 1, 3 and 5 replicas following one `ref: main` source, then one
 *   `refs: ["v*"]` source (two tags), each polling every 2 s, nothing pushed, each in its own key prefix and repo;
 *   counted as the remote sees them: upload-pack POSTs that fetch nothing (protocol v2 `ls-refs`), beside the
 *   `info/refs` GETs (one per git connection: listings and fetches) and the fetch POSTs;
 * - the time from a webhook at one replica (never the lease holder) to the new commit (`ref:`) or the new tag's
 *   source (`refs:`) listed at all three, over `pushes` pushes (p50, max; each wait capped at `capSeconds`);
 * - for `refs:` without webhook, the time polling alone takes to list a new tag at all three;
 * - requests (skills/list, /status, /readyz) that failed while Redis was killed and started again under them;
 * - the files and lines of src/sync/, and its subfolders' files that import a file of sync/ above them.
 * Usage: npx tsx bench/coordination.ts [pushes=20] [idleSeconds=20] [capSeconds=30]
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SkillsClient } from '@modelcontextprotocol/client/ext/skills';
import { refSourceId } from '../src/shared/refNames.ts';
import type { StatusReport } from '../src/shared/status.ts';
import { git as run } from '../test/helpers/git.ts';
import { startGitHttpServer } from '../test/helpers/gitHttpServer.ts';
import { pushableRepo, skillMd } from '../test/helpers/pushable.ts';
import { waitReady } from '../test/helpers/ready.ts';
import { startRedisServer } from '../test/helpers/redisServer.ts';
import { connectHttp, writeConfig } from '../test/helpers/server.ts';
import { type InProcessServer, serveInProcess } from '../test/helpers/serving.ts';

const pushes = Number(process.argv[2] ?? '20');
const idleSeconds = Number(process.argv[3] ?? '20');
const capMs = Number(process.argv[4] ?? '30') * 1000;
const POLL = '2s';
const POLL_MS = 2000;
const POLL_PUSHES = 5;
const SECRET = 'bench-secret';
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const root = mkdtempSync(path.join(tmpdir(), 'skillpin-coordination-bench-'));
type Kind = 'ref' | 'refs';
type Repo = ReturnType<typeof pushableRepo>;

/** A repo with one commit on main, and for `refs:` two tags on it (v0.1.0, v0.2.0). */
function newRepo(name: string, kind: Kind): Repo {
  const repo = pushableRepo(root, name);
  const commit = repo.push({ 'alpha/SKILL.md': skillMd('alpha', 'v0') });
  if (kind === 'refs') for (const tag of ['v0.1.0', 'v0.2.0']) tagAt(repo, tag, commit);
  return repo;
}
const tagAt = (repo: Repo, tag: string, commit: string) =>
  run(['--git-dir', repo.bare, 'update-ref', `refs/tags/${tag}`, commit]);

const git = await startGitHttpServer({ root });
const redis = await startRedisServer();
const env = {
  REDIS_URL: redis.url,
  BENCH_SECRET: SECRET,
  BENCH_COORDINATION: 'bench-coordination-secret-0123456789',
};

/** What the remote served for one repo: listings (ls-refs POSTs), info/refs GETs, fetch POSTs. */
function remoteCounts(repo: string) {
  const of = git.requests.filter((r) => r.path.startsWith(`/${repo}.git/`));
  const pack = of.filter((r) => r.method === 'POST' && r.path.endsWith('/git-upload-pack'));
  return {
    listings: pack.filter((r) => !r.fetch).length,
    gets: of.filter((r) => r.method === 'GET' && r.path.endsWith('/info/refs')).length,
    fetches: pack.filter((r) => r.fetch).length,
  };
}
type Counts = ReturnType<typeof remoteCounts>;

const listed = (server: InProcessServer, source: string) =>
  server.serving.catalog.listed().find((ns) => ns.source === source)?.commit;
const statusOf = async (server: InProcessServer) =>
  (await (await fetch(server.url.replace(/\/mcp$/, '/status'))).json()) as StatusReport;

/** `count` replicas of one source (its own key prefix), each with its own dataDir, ready. */
async function replicas(
  count: number,
  prefix: string,
  kind: Kind,
  repo: string,
  poll: string,
  lease: string,
) {
  const target = kind === 'ref' ? { ref: 'main' } : { refs: ['v*'] };
  const config = writeConfig({
    webhook: { secret: '${BENCH_SECRET}' },
    coordination: { redis: '${REDIS_URL}', secret: '${BENCH_COORDINATION}', keyPrefix: prefix, lease },
    sources: [{ id: 'live', url: git.urlFor(`${repo}.git`), ...target, poll }],
  });
  const started: InProcessServer[] = [];
  for (let i = 0; i < count; i++) {
    const server = await serveInProcess(config, {
      dataDir: mkdtempSync(path.join(tmpdir(), 'skillpin-coordination-replica-')),
      env,
      logLevel: 'warn',
    });
    await waitReady(server.url);
    started.push(server);
  }
  return started;
}

/** What the remote served in `idleSeconds` to `count` replicas polling every 2 s, nothing pushed. */
async function idle(count: number, kind: Kind): Promise<Counts> {
  const repo = `idle-${kind}-${count}`;
  newRepo(repo, kind);
  const servers = await replicas(count, `bench-idle-${kind}-${count}:`, kind, repo, POLL, POLL);
  await pause(2000);
  const before = remoteCounts(repo);
  await pause(idleSeconds * 1000);
  const after = remoteCounts(repo);
  for (const server of servers) await server.stop();
  return {
    listings: after.listings - before.listings,
    gets: after.gets - before.gets,
    fetches: after.fetches - before.fetches,
  };
}

/** A replica that does not hold the lease of any source it reports (the second started when none holds one). */
async function notHolding(servers: InProcessServer[]): Promise<{ server: InProcessServer; holder: boolean }> {
  const holders = new Set(
    (await statusOf(servers[0]!)).sources
      .map((s) => s.replicas?.leaseHolder)
      .filter((h) => typeof h === 'string'),
  );
  const ids = await Promise.all(
    servers.map(async (server) => (await statusOf(server)).coordination!.replica),
  );
  const at = ids.findIndex((id) => id !== null && !holders.has(id));
  return { server: servers[at === -1 ? 1 : at]!, holder: holders.size > 0 };
}

const hook = async (server: InProcessServer, body: object) => {
  const answer = await fetch(server.url.replace(/\/mcp$/, '/hooks/git'), {
    method: 'POST',
    headers: { authorization: `Bearer ${SECRET}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (answer.status !== 202) throw new Error(`webhook answered ${answer.status}`);
};

/** Milliseconds from `started` until `done` holds at every server; `undefined` past the cap. */
async function untilAll(servers: InProcessServer[], done: (s: InProcessServer) => boolean, started: number) {
  while (!servers.every(done)) {
    if (performance.now() - started > capMs) return undefined;
    await pause(5);
  }
  return performance.now() - started;
}

/** Webhook to all three for `ref: main`: a source that polls once an hour, so only the webhook moves it. */
async function branchHook(three: InProcessServer[], repo: Repo): Promise<Array<number | undefined>> {
  const times: Array<number | undefined> = [];
  for (let i = 0; i < pushes; i++) {
    const { server } = await notHolding(three);
    const commit = repo.push({ 'alpha/SKILL.md': skillMd('alpha', `push ${i}`) });
    const started = performance.now();
    await hook(server, { source: 'live' });
    times.push(await untilAll(three, (s) => listed(s, 'live') === commit, started));
  }
  return times;
}

/** A new tag vN.0.0 per push, with a webhook at one replica or (`viaHook` false) by polling alone. */
async function tagPushes(three: InProcessServer[], repo: Repo, count: number, viaHook: boolean) {
  const times: Array<number | undefined> = [];
  let holder = false;
  const atCap: number[] = [];
  for (let i = 1; i <= count; i++) {
    const target = await notHolding(three);
    holder ||= target.holder;
    const tag = `v${i}.0.0`;
    const id = refSourceId('live', `refs/tags/${tag}`)!;
    const commit = repo.push({ 'alpha/SKILL.md': skillMd('alpha', tag) });
    tagAt(repo, tag, commit);
    const started = performance.now();
    if (viaHook) await hook(target.server, { source: 'live', ref: `refs/tags/${tag}` });
    times.push(await untilAll(three, (s) => listed(s, id) === commit, started));
    if (times.at(-1) === undefined) atCap.push(three.filter((s) => listed(s, id) === commit).length);
    // Three waits in a row past the cap: the rest would be too (and take minutes), so they are not tried.
    if (times.length >= 3 && times.slice(-3).every((t) => t === undefined)) break;
  }
  return { times, holder, untried: count - times.length, atCap };
}

/** Requests to every replica while Redis is killed and started again under them. */
async function redisOutage(three: InProcessServer[]) {
  let requests = 0;
  const failures: string[] = [];
  const clients = await Promise.all(three.map((server) => connectHttp(server.url, 'modern')));
  let asking = true;
  const askLoop = (async () => {
    while (asking) {
      for (const [i, server] of three.entries()) {
        const base = server.url.replace(/\/mcp$/, '');
        for (const request of [
          () => fetch(`${base}/status`),
          () => fetch(`${base}/readyz`),
          async () => {
            await new SkillsClient(clients[i]!.client).list();
            return new Response(null, { status: 200 });
          },
        ]) {
          requests++;
          try {
            const answer = await request();
            if (!answer.ok) failures.push(`${answer.status}`);
          } catch (error) {
            failures.push(String(error));
          }
        }
      }
    }
  })();
  await pause(1000);
  await redis.kill();
  while ((await Promise.all(three.map(statusOf))).some((s) => s.coordination!.state !== 'down'))
    await pause(20);
  const downAt = performance.now();
  await pause(3000);
  await redis.start();
  while ((await Promise.all(three.map(statusOf))).some((s) => s.coordination!.state !== 'up'))
    await pause(20);
  const backMs = performance.now() - downAt;
  await pause(1000);
  asking = false;
  await askLoop;
  for (const client of clients) await client.close();
  return { requests, failures, backMs };
}

/** Files and lines of src/sync/, and the files of its subfolders importing a file of sync/ itself. */
function syncShape() {
  const dir = path.join(import.meta.dirname, '..', 'src', 'sync');
  const files = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
  const texts = files.map((f) => ({ f, text: readFileSync(path.join(dir, f), 'utf8') }));
  const lines = texts.reduce(
    (sum, { text }) => sum + text.split('\n').length - (text.endsWith('\n') ? 1 : 0),
    0,
  );
  const upward = texts.filter(({ f, text }) => f.includes(path.sep) && /from '\.\.\/[^/']+\.ts'/.test(text));
  return { files: files.length, lines, upward: upward.map(({ f }) => f) };
}

const idleCounts: Record<Kind, Record<number, Counts>> = { ref: {}, refs: {} };
for (const kind of ['ref', 'refs'] as const)
  for (const count of [1, 3, 5]) idleCounts[kind][count] = await idle(count, kind);

const branchRepo = newRepo('skills', 'ref');
const three = await replicas(3, 'bench-hook:', 'ref', 'skills', '1h', '1s');
const branchTimes = await branchHook(three, branchRepo);

const tagHookRepo = newRepo('tags-hook', 'refs');
const tagHookServers = await replicas(3, 'bench-tags-hook:', 'refs', 'tags-hook', '1h', '1s');
const tagHook = await tagPushes(tagHookServers, tagHookRepo, pushes, true);
for (const server of tagHookServers) await server.stop();

const tagPollRepo = newRepo('tags-poll', 'refs');
const tagPollServers = await replicas(3, 'bench-tags-poll:', 'refs', 'tags-poll', POLL, POLL);
const tagPoll = await tagPushes(tagPollServers, tagPollRepo, POLL_PUSHES, false);
for (const server of tagPollServers) await server.stop();

const outage = await redisOutage(three);
for (const server of three) await server.stop();
await redis.close();
await git.close();

const ms = (value: number) => `${Math.round(value)} ms`;
/** p50 and max of what arrived within the cap, and how many did not. */
function latency(times: Array<number | undefined>): string {
  const within = times.filter((t): t is number => t !== undefined).sort((a, b) => a - b);
  const late = times.length - within.length;
  const lateText = late === 0 ? '' : `; ${late} of ${times.length} > ${capMs / 1000} s`;
  if (within.length === 0) return `all ${times.length} > ${capMs / 1000} s`;
  return `p50 ${ms(within[Math.floor((within.length - 1) / 2)]!)}, max ${ms(within.at(-1)!)} (${within.length} pushes${lateText})`;
}
/** How many replicas had listed the tag when each capped wait gave up. */
const atCapText = (atCap: number[]) =>
  atCap.length === 0 ? '' : `; listed at the cap by ${atCap.join(', ')} of 3`;
const untried = (n: number) => (n === 0 ? '' : `; ${n} more not tried after 3 in a row past the cap`);
const per20 = (n: number) => Math.round((n * 20) / idleSeconds);
const countsText = (c: Counts) =>
  c.listings === c.gets
    ? `${per20(c.listings)} (fetches ${per20(c.fetches)})`
    : `${per20(c.listings)} ls-refs, ${per20(c.gets)} info/refs GETs (fetches ${per20(c.fetches)})`;
const ratio = (kind: Kind, n: number) => {
  const one = idleCounts[kind][1]!;
  const many = idleCounts[kind][n]!;
  const of = (a: number, b: number) => (b === 0 ? 'n/a' : `${(a / b).toFixed(2)}×`);
  return `${of(many.listings, one.listings)} (GETs ${of(many.gets, one.gets)})`;
};
const shape = syncShape();
const rows: Array<[string, string, string]> = [
  ...[1, 3, 5].map((n): [string, string, string] => [
    `ref listings per 20 s, ${n} replica${n === 1 ? '' : 's'}`,
    countsText(idleCounts.ref[n]!),
    countsText(idleCounts.refs[n]!),
  ]),
  ['ratio 3 / 1', ratio('ref', 3), ratio('refs', 3)],
  ['ratio 5 / 1', ratio('ref', 5), ratio('refs', 5)],
  [
    'webhook at a non-holder → listed at all 3',
    latency(branchTimes),
    `${latency(tagHook.times)}${untried(tagHook.untried)}${atCapText(tagHook.atCap)}${tagHook.holder ? '' : ' (no lease holder reported)'}`,
  ],
  [
    `polling alone (poll ${POLL}) → listed at all 3`,
    '—',
    `${latency(tagPoll.times)}${untried(tagPoll.untried)}${atCapText(tagPoll.atCap)}; within one interval (${POLL_MS} ms): ${tagPoll.times.filter((t) => t !== undefined && t <= POLL_MS).length} of ${tagPoll.times.length}`,
  ],
];
console.log(`| measure | ref: main | refs: ["v*"] (two tags) |\n|---|---|---|`);
for (const row of rows) console.log(`| ${row.join(' | ')} |`);
console.log(
  `\nRedis killed and started again: ${outage.requests} requests, ${outage.failures.length} failed` +
    `${outage.failures.length === 0 ? '' : ` (${outage.failures.slice(0, 3).join('; ')})`}, down to up ${ms(outage.backMs)}.`,
);
console.log(
  `git backend ${process.env.SKILLPIN_GIT_BACKEND || 'auto'}, ${execFileSync('git', ['--version'], { encoding: 'utf8' }).trim()}; ` +
    'a listing is an upload-pack POST that fetches nothing (ls-refs); info/refs GETs are shown where they differ.',
);
console.log(
  `src/sync/: ${shape.files} files, ${shape.lines} lines; subfolder files importing a file of sync/ itself: ` +
    `${shape.upward.length} (${shape.upward.join(', ')}).`,
);
