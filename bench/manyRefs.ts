/**
 * Many refs (issue 38): a repository of 5,005 tags, five on each of 1,001 commits of one linear history (a release
 * tagged v1.<c>.0 to v1.<c>.4, as re-tagged and aliased releases are), served over loopback smart HTTP to
 * `skillpin serve --http` (a child process) by a source `refs: ["v*"]` with `maxRefs: 1000`, poll 5 s: the 1,000
 * newest tags, on 200 distinct commits, ten skills each. It measures
 *   - empty dataDir start to /readyz and to every namespace listed, and the remote's requests till then;
 *   - its peer in the same run: the 200 distinct commits alone, one tag each (`refs: ["v1.*.0"]`, `maxRefs: 200`);
 *   - idle CPU of skillpin (its process and the git processes it waited for) over `idle` seconds with no traffic,
 *     as % of a core, and the remote's requests meanwhile;
 *   - a followed tag deleted on the remote to the moment its namespace leaves skills/list (checked by full listings,
 *     each taking a few hundred ms: that is the resolution).
 * SKILLPIN_ROOT runs another checkout's skillpin (a `before`); the load average is printed with each figure.
 * MANYREFS_CPU_PROF=<dir> runs the followed tags' server under `node --cpu-prof` into <dir> and prints the idle
 * window's seconds since its start (for `bench/cpuProfile.ts <dir> 10 <from> <to>`).
 * Usage: npx tsx bench/manyRefs.ts [idleSeconds=30] [follow=1000]   (follow: the newest tags followed, a multiple of 5)
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { loadavg } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { startGitHttpServer } from '../test/helpers/gitHttpServer.ts';
import { call, httpStatus, type McpTarget, rssMiB, startChild } from './mcpHttp.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const projectRoot = path.resolve(here, '..');
const skillpinRoot = process.env['SKILLPIN_ROOT'] ?? projectRoot;
const workDir = path.join(projectRoot, '.skillpin', 'bench', 'manyRefs');
const COMMITS = 1001;
const TAGS_PER_COMMIT = 5;
const SKILLS = 10;
const GIT_ENV = {
  ...process.env,
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  HOME: '/nonexistent',
};
const TICKS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());

const load = () => loadavg()[0]!.toFixed(2);
const since = (from: number) => performance.now() - from;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** CPU ms of a process and of the children it waited for (git fetch, ls-remote), from /proc/<pid>/stat. */
function cpuWithChildrenMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat
    .slice(stat.lastIndexOf(')') + 2)
    .split(' ')
    .map(Number);
  return ((f[11]! + f[12]! + f[13]! + f[14]!) * 1000) / TICKS;
}

const skillMd = (name: string, release: number) =>
  `---\nname: ${name}\ndescription: Policy ${name} as of release ${release}.\n---\n\n# ${name}\n\nRelease ${release}: follow the steps.\n`;

/** The tagged repository (made once): its bare path and each commit's SHA, oldest first. */
function taggedRepo(root: string): { gitdir: string; commits: string[] } {
  const gitdir = path.join(root, 'tags.git');
  const marks = path.join(root, 'marks');
  try {
    const commits = readFileSync(marks, 'utf8')
      .trim()
      .split('\n')
      .map((l) => l.split(' ')[1]!);
    if (commits.length === COMMITS) return { gitdir, commits };
  } catch {}
  rmSync(root, { recursive: true, force: true });
  mkdirSync(root, { recursive: true });
  execFileSync('git', ['init', '--quiet', '--bare', '--initial-branch=main', gitdir], { env: GIT_ENV });
  const out: string[] = [];
  for (let c = 0; c < COMMITS; c++) {
    const message = `release ${c}`;
    out.push(
      `commit refs/heads/main`,
      `mark :${c + 1}`,
      `committer bench <bench@skillpin.invalid> ${1_700_000_000 + c * 3600} +0000`,
    );
    out.push(`data ${message.length}`, message);
    const changed = c === 0 ? Array.from({ length: SKILLS }, (_, s) => s) : [c % SKILLS];
    for (const s of changed) {
      const content = skillMd(`policy-${s}`, c);
      out.push(`M 100644 inline policy-${s}/SKILL.md`, `data ${Buffer.byteLength(content)}`, content);
    }
    out.push('');
  }
  for (let c = 0; c < COMMITS; c++)
    for (let t = 0; t < TAGS_PER_COMMIT; t++) out.push(`reset refs/tags/v1.${c}.${t}`, `from :${c + 1}`, '');
  const run = spawnSync('git', ['--git-dir', gitdir, 'fast-import', '--quiet', `--export-marks=${marks}`], {
    input: `${out.join('\n')}\n`,
    env: GIT_ENV,
  });
  if (run.status !== 0) throw new Error(`fast-import failed: ${run.stderr.toString()}`);
  return taggedRepo(root);
}

/** Every URI of a full skills/list walk. */
async function listedUris(server: McpTarget): Promise<string[]> {
  const uris: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await call(server, 'skills/list', cursor === undefined ? {} : { cursor });
    for (const skill of page['skills'] as Array<{ uri: string }>) uris.push(skill.uri);
    cursor = page['nextCursor'] as string | undefined;
  } while (cursor !== undefined);
  return uris;
}

/** The namespaces (source ids) of a full skills/list walk. */
const namespacesOf = (uris: string[]) => new Set(uris.map((u) => u.split('/')[2]));

/**
 * `skillpin serve --http` on `sources` from an empty dataDir: the time to /readyz answering 200 and to the listing
 * holding `namespaces` namespaces (checked by a full listing every second: that is its resolution).
 */
async function serve(name: string, sources: object[], namespaces: number, profile: string[] = []) {
  const dir = path.join(workDir, name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const config = path.join(dir, 'skillpin.yaml');
  writeFileSync(config, stringify({ dataDir: path.join(dir, 'data'), sources }));
  const started = performance.now();
  const { url, child } = await startChild(
    [
      ...profile,
      '--import',
      'tsx',
      path.join(skillpinRoot, 'src', 'cli.ts'),
      'serve',
      '--config',
      config,
      '--http',
      '127.0.0.1:0',
    ],
    { cwd: skillpinRoot, timeoutMs: 1_800_000 },
  );
  const server: McpTarget = { name, url, agent: new Agent({ keepAlive: true }) };
  const readyz = url.replace(/\/mcp$/, '/readyz');
  while ((await httpStatus(readyz)) !== 200) await sleep(20);
  const ready = since(started);
  let uris = await listedUris(server);
  while (namespacesOf(uris).size < namespaces) {
    if (since(started) > 1_800_000)
      throw new Error(`${name}: ${namespacesOf(uris).size} namespaces after 30 min`);
    await sleep(1000);
    uris = await listedUris(server);
  }
  const listed = since(started);
  const stop = async () => {
    server.agent.destroy();
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
  };
  return { server, child, started, ready, listed, skills: uris.length, stop };
}

async function main(): Promise<void> {
  const idleSeconds = Number(process.argv[2] ?? '30');
  const follow = Number(process.argv[3] ?? '1000');
  const { gitdir, commits } = taggedRepo(path.join(workDir, 'remote'));
  const remote = await startGitHttpServer({
    root: path.dirname(gitdir),
    config: { 'uploadpack.allowAnySHA1InWant': 'true' },
  });
  const url = remote.urlFor('tags.git');
  const followed = commits.slice(-follow / TAGS_PER_COMMIT);
  console.log(
    `skillpin at ${skillpinRoot}; ${COMMITS * TAGS_PER_COMMIT} tags on ${COMMITS} commits, following ${follow} (${followed.length} distinct commits, ${SKILLS} skills each)`,
  );
  const requests = (from: number) => {
    const made = remote.requests.slice(from);
    return `${made.length} requests (${made.filter((r) => r.path.endsWith('/info/refs')).length} ref listings, ${made.filter((r) => r.fetch).length} fetches)`;
  };
  try {
    let mark = remote.requests.length;
    // The peer: one tag per distinct commit (v1.<c>.0 of the newest 200), through the same code.
    const peer = await serve(
      'commits',
      [{ id: 'distinct', url, refs: ['v1.*.0'], maxRefs: followed.length, poll: '1h' }],
      followed.length,
    );
    console.log(
      `  refs: ["v1.*.0"], maxRefs ${followed.length} (the distinct commits alone): /readyz ${peer.ready.toFixed(0)} ms, ` +
        `all listed ${peer.listed.toFixed(0)} ms, ${requests(mark)} (load ${load()})`,
    );
    await peer.stop();
    mark = remote.requests.length;
    const profileDir = process.env['MANYREFS_CPU_PROF'];
    const tags = await serve(
      'refs',
      [{ id: 'many', url, refs: ['v*'], maxRefs: follow, poll: '5s' }],
      follow,
      profileDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${path.resolve(profileDir)}`],
    );
    try {
      console.log(
        `  refs: ["v*"], maxRefs ${follow}, poll 5s: /readyz ${tags.ready.toFixed(0)} ms, all ${follow} listed ${tags.listed.toFixed(0)} ms ` +
          `(${(tags.listed / peer.listed).toFixed(2)}× the distinct commits'), ${requests(mark)}; ${tags.skills} skills, ` +
          `RSS ${rssMiB(tags.child.pid!).toFixed(0)} MiB (load ${load()})`,
      );
      await sleep(6000);
      mark = remote.requests.length;
      const cpu = cpuWithChildrenMs(tags.child.pid!);
      await sleep(idleSeconds * 1000);
      const used = cpuWithChildrenMs(tags.child.pid!) - cpu;
      const window = `${((since(tags.started) - idleSeconds * 1000) / 1000).toFixed(0)} ${(since(tags.started) / 1000).toFixed(0)}`;
      console.log(
        `  idle ${idleSeconds} s (polls every 5 s): ${((used / (idleSeconds * 1000)) * 100).toFixed(1)} % of a core, ${requests(mark)} (load ${load()})` +
          (profileDir === undefined ? '' : `; profiled: its seconds ${window}`),
      );
      const newest = `v1.${COMMITS - 1}.${TAGS_PER_COMMIT - 1}`;
      const prefix = `skill://many.${newest}/`;
      execFileSync('git', ['--git-dir', gitdir, 'update-ref', '-d', `refs/tags/${newest}`], { env: GIT_ENV });
      const deleted = performance.now();
      let checks = 0;
      while ((await listedUris(tags.server)).some((u) => u.startsWith(prefix))) {
        checks++;
        await sleep(200);
        if (since(deleted) > 300_000) throw new Error(`${newest} still listed after 300 s`);
      }
      console.log(
        `  tag ${newest} deleted → gone from skills/list in ${since(deleted).toFixed(0)} ms (${checks} full listings) (load ${load()})`,
      );
    } finally {
      await tags.stop();
      execFileSync(
        'git',
        [
          '--git-dir',
          gitdir,
          'update-ref',
          `refs/tags/v1.${COMMITS - 1}.${TAGS_PER_COMMIT - 1}`,
          commits.at(-1)!,
        ],
        {
          env: GIT_ENV,
        },
      );
    }
  } finally {
    await remote.close();
  }
}

await main();
