/**
 * Scale benchmark (issue 38): one catalog served as N sources, and a synthetic catalog, each by `skillpin serve
 * --http` in a child process, from an empty dataDir and again from the dataDir it left (a warm restart):
 *   - start to ready (GET /readyz 200), RSS at ready;
 *   - the first full listing (every skills/list page) right at ready, and a later one;
 *   - the first skill_search right at ready, and skill_search p50/p99 over 60 searches;
 * and the SDK's folder server (bench/peers/sdkHttp.mjs) on the synthetic catalog's checkout: start to its first full
 * listing, RSS. skillpin runs as it ships, `node bin/skillpin.js` (`npm run build` first; a checkout's own build
 * with SKILLPIN_ROOT). SKILLPIN_ROOT runs another checkout's skillpin (a `before`); the load average is printed with each.
 * One command per scenario (each prints the sources it built and a line per start):
 *   npx tsx bench/scale.ts copies [10,40,130] [catalog=.skillpin/catalogs/ComposioHQ+awesome-claude-skills]
 *   npx tsx bench/scale.ts shapes [1000x100] [catalogsDir=.skillpin/catalogs]   (bench/realShapes.ts; + the SDK)
 *   npx tsx bench/scale.ts synthetic [2000]                                     (bench/synthetic.ts; + the SDK)
 * With --profile, only the empty-dataDir start runs, under `node --cpu-prof`, stopped at ready; the profile's top
 * frames by self time are printed (bench/cpuProfile.ts). With --warm, only the warm restart runs, from the dataDir an
 * earlier run of the same scenario left (for a change that leaves what dataDir holds as it was), and not the SDK.
 */
import { execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { loadavg } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { call, httpStatus, type McpTarget, rssMiB, startChild } from './mcpHttp.ts';
import { summarizeProfile } from './cpuProfile.ts';
import { shapesCatalog, shapesFolder } from './realShapes.ts';
import { syntheticRepo } from './synthetic.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const projectRoot = path.resolve(here, '..');
const skillpinRoot = process.env['SKILLPIN_ROOT'] ?? projectRoot;
const workDir = path.join(projectRoot, '.skillpin', 'bench', 'scale');
/** Where --profile writes the empty start's CPU profile (a folder per run), or undefined without it. */
const profileDir = process.argv.includes('--profile')
  ? path.join(workDir, 'profiles', new Date().toISOString().replace(/[:.]/g, '-'))
  : undefined;
/** Only the warm restart, from the dataDir an earlier run left. */
const warmOnly = process.argv.includes('--warm');
const QUERIES = [
  'pdf forms',
  'slack message',
  'create a spreadsheet',
  'image resize',
  'git commit review',
  'deploy',
];

interface Server extends McpTarget {
  child: ChildProcess;
  started: number;
}

const load = () => loadavg()[0]!.toFixed(2);
const ms = (from: number) => performance.now() - from;

async function untilReady(server: Server): Promise<number> {
  const readyz = server.url.replace(/\/mcp$/, '/readyz');
  while ((await httpStatus(readyz)) !== 200) await new Promise((resolve) => setTimeout(resolve, 20));
  return ms(server.started);
}

/** Every skills/list page walked: the skills listed and how long it took. */
async function fullListing(server: McpTarget): Promise<{ skills: number; ms: number; pages: number }> {
  const started = performance.now();
  let cursor: string | undefined;
  let skills = 0;
  let pages = 0;
  do {
    const page = await call(server, 'skills/list', cursor === undefined ? {} : { cursor });
    skills += (page['skills'] as unknown[]).length;
    pages++;
    cursor = page['nextCursor'] as string | undefined;
  } while (cursor !== undefined);
  return { skills, ms: ms(started), pages };
}

const search = (server: McpTarget, query: string) =>
  call(server, 'tools/call', { name: 'skill_search', arguments: { query } });

/** skill_search latencies over 60 searches: p50 and p99. */
async function searchLatencies(server: McpTarget): Promise<string> {
  const times: number[] = [];
  for (let i = 0; i < 60; i++) {
    const started = performance.now();
    await search(server, QUERIES[i % QUERIES.length]!);
    times.push(ms(started));
  }
  times.sort((a, b) => a - b);
  const at = (p: number) =>
    times[Math.min(times.length - 1, Math.floor((times.length * p) / 100))]!.toFixed(1);
  return `p50 ${at(50)} ms, p99 ${at(99)} ms`;
}

/**
 * skillpin as it ships (`bin/skillpin.js`, the checkout's `npm run build` first), so RSS is its own; under
 * --profile, src/ through tsx, so the profile names src/'s functions (tsx's own CPU and memory then count too).
 */
async function startSkillpin(config: string): Promise<Server> {
  const started = performance.now();
  const cli =
    profileDir === undefined
      ? [path.join(skillpinRoot, 'bin', 'skillpin.js')]
      : [
          `--cpu-prof`,
          `--cpu-prof-dir=${profileDir}`,
          '--import',
          'tsx',
          path.join(skillpinRoot, 'src', 'cli.ts'),
        ];
  const { url, child } = await startChild([...cli, 'serve', '--config', config, '--http', '127.0.0.1:0'], {
    cwd: skillpinRoot,
    timeoutMs: 1_800_000,
  });
  return { name: 'skillpin', url, child, started, agent: new Agent({ keepAlive: true }) };
}

/** One start of skillpin on `config`: what it took to be ready and to answer at ready. */
async function oneStart(label: string, config: string): Promise<void> {
  const server = await startSkillpin(config);
  try {
    const ready = await untilReady(server);
    const rss = rssMiB(server.child.pid!);
    const first = await fullListing(server);
    const searched = performance.now();
    await search(server, 'pdf forms');
    const firstSearch = ms(searched);
    const later = await fullListing(server);
    const latencies = await searchLatencies(server);
    console.log(
      `  ${label.padEnd(13)} ready ${ready.toFixed(0)} ms, RSS ${rss.toFixed(0)} MiB; first listing ${first.ms.toFixed(0)} ms ` +
        `(${first.skills} skills, ${first.pages} pages), later ${later.ms.toFixed(0)} ms; first search ${firstSearch.toFixed(0)} ms, ` +
        `skill_search ${latencies} (load ${load()})`,
    );
  } finally {
    server.agent.destroy();
    server.child.kill('SIGTERM');
    await new Promise((resolve) => server.child.once('exit', resolve));
  }
}

/** An empty-dataDir start under --cpu-prof, stopped at ready (the profile is written as it exits): its top frames. */
async function profiledStart(config: string): Promise<void> {
  const server = await startSkillpin(config);
  const ready = await untilReady(server);
  const rss = rssMiB(server.child.pid!);
  server.agent.destroy();
  server.child.kill('SIGTERM');
  await new Promise((resolve) => server.child.once('exit', resolve));
  console.log(
    `  empty dataDir ready ${ready.toFixed(0)} ms under --cpu-prof, RSS ${rss.toFixed(0)} MiB (load ${load()})`,
  );
  console.log(summarizeProfile(profileDir!, 5));
}

/** `sources` served from an empty dataDir, then from the one it left. */
async function scenario(name: string, sources: object[]): Promise<void> {
  const dir = path.join(workDir, name);
  const config = path.join(dir, 'skillpin.yaml');
  console.log(`${name}:`);
  if (warmOnly) {
    if (!existsSync(path.join(dir, 'data')))
      throw new Error(`--warm: no dataDir in ${dir}: run without it first`);
    return oneStart('warm restart', config);
  }
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  writeFileSync(config, stringify({ dataDir: path.join(dir, 'data'), sources }));
  if (profileDir !== undefined) return profiledStart(config);
  await oneStart('empty dataDir', config);
  await oneStart('warm restart', config);
}

/** The SDK's folder server on `folder`: start to its first full listing, and RSS then. */
async function sdkFolder(folder: string): Promise<void> {
  const started = performance.now();
  const { url, child } = await startChild([path.join(here, 'peers', 'sdkHttp.mjs'), folder], {
    cwd: projectRoot,
    timeoutMs: 1_800_000,
  });
  const server: McpTarget = { name: 'sdk', url, agent: new Agent({ keepAlive: true }) };
  try {
    const first = await fullListing(server);
    const later = await fullListing(server);
    console.log(
      `  sdk folder    first full listing ${ms(started).toFixed(0)} ms after start (${first.skills} skills, ${first.pages} pages), ` +
        `RSS ${rssMiB(child.pid!).toFixed(0)} MiB, later listing ${later.ms.toFixed(0)} ms (load ${load()})`,
    );
  } finally {
    server.agent.destroy();
    child.kill('SIGTERM');
  }
}

/** The synthetic catalog's base commit checked out as one folder for the SDK (made afresh). */
function syntheticFolder(gitdir: string, commit: string): string {
  const folder = path.join(workDir, 'folder');
  rmSync(folder, { recursive: true, force: true });
  mkdirSync(folder, { recursive: true });
  execFileSync('sh', ['-c', `git --git-dir "${gitdir}" archive ${commit} skills | tar -x -C "${folder}"`]);
  return path.join(folder, 'skills');
}

const copiesSources = (n: number, gitdir: string) =>
  Array.from({ length: n }, (_, i) => ({ id: `c${i}`, path: gitdir, ref: 'HEAD' }));

/** One scenario per command: each builds its sources (once, cached under .skillpin/bench/scale) and serves them. */
async function main(): Promise<void> {
  const [kind = 'copies', arg, source] = process.argv.slice(2).filter((a) => !a.startsWith('--'));
  if (profileDir === undefined && !existsSync(path.join(skillpinRoot, 'dist')))
    throw new Error(`${skillpinRoot}/dist is missing: npm run build there first`);
  console.log(
    `skillpin at ${skillpinRoot}${profileDir === undefined ? '' : `, profiling into ${profileDir}`}`,
  );
  if (kind === 'copies') {
    const gitdir = path.resolve(projectRoot, source ?? '.skillpin/catalogs/ComposioHQ+awesome-claude-skills');
    for (const n of (arg ?? '10,40').split(',').map(Number))
      await scenario(`copies-${n}`, copiesSources(n, gitdir));
  } else if (kind === 'shapes') {
    const [repos, skills] = (arg ?? '1000x100').split('x').map(Number) as [number, number];
    const catalogs = path.resolve(projectRoot, source ?? '.skillpin/catalogs');
    const catalog = await shapesCatalog(catalogs, path.join(workDir, 'repos'), repos, skills);
    console.log(
      `  ${catalog.skills} skills in ${repos} repositories, ${(catalog.bytes / 2 ** 20).toFixed(0)} MiB of git`,
    );
    await scenario(
      `shapes-${repos}x${skills}`,
      catalog.gitdirs.map((gitdir, i) => ({ id: `r${i}`, path: gitdir, ref: 'main' })),
    );
    if (profileDir === undefined && !warmOnly)
      await sdkFolder(shapesFolder(catalog, path.join(workDir, `shapes-folder-${repos}x${skills}`)));
  } else if (kind === 'synthetic') {
    const repo = syntheticRepo(path.join(workDir, 'repos'), Number(arg ?? '2000'), 2);
    await scenario(`synthetic-${arg ?? '2000'}`, [
      { id: 'synthetic', path: repo.gitdir, commit: repo.base, paths: ['skills'] },
    ]);
    if (profileDir === undefined && !warmOnly) await sdkFolder(syntheticFolder(repo.gitdir, repo.base));
  } else throw new Error(`unknown scenario ${kind}: copies, shapes or synthetic`);
}

await main();
