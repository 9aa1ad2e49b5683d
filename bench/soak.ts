/**
 * Soak: `skillpin serve --http` serving the 1000-skill synthetic catalog (a local source following `main`, polled
 * every `sync` seconds) while the bench commits a one-file change to `main` just as often, so every poll syncs a
 * new commit (index, swap, retention). `clients` SDK clients (2026-07-28, SkillsClient) read constantly: the
 * whole listing (every skills/list page), then 50 files of its skills, each read and verified as a host does
 * (size, digest, and for SKILL.md the frontmatter), and again. Prints the server's RSS at the start (after a warm-up) and the end, the slope of a
 * least-squares line through RSS sampled every 5 s with its 95% interval, the syncs seen, errors and verification
 * failures. Target: slope within noise (the interval holds 0), 0 errors, 0 failures.
 * Also: the default skill_list answer for this catalog (bytes, and tokens at 4 and at 3 characters a token)
 * against every skill in one answer (what skill_list gave before it paged).
 * Usage: npx tsx bench/soak.ts [--minutes 10] [--clients 16] [--sync 10]
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { type Skill, SkillsClient, SkillVerificationError } from '@modelcontextprotocol/client/ext/skills';
import { stringify } from 'yaml';
import { syntheticRepo } from './synthetic.ts';

const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const workDir = path.join(projectRoot, '.skillpin', 'bench');
const SAMPLE_MS = 5000;
/** Files each client reads from one listing before it lists again. */
const READS_PER_LISTING = 50;

const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '10' },
    clients: { type: 'string', default: '16' },
    sync: { type: 'string', default: '10' },
  },
});
const minutes = Number(values.minutes);
const clients = Number(values.clients);
const syncSeconds = Number(values.sync);

function rssMiB(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'))!;
  return Number(line.split(/\s+/)[1]) / 1024;
}

/** Least-squares slope (MiB per minute) of RSS over time, with its 95% interval (normal approximation). */
function slopeOf(samples: ReadonlyArray<{ minute: number; rss: number }>): { slope: number; half: number } {
  const n = samples.length;
  const mx = samples.reduce((s, p) => s + p.minute, 0) / n;
  const my = samples.reduce((s, p) => s + p.rss, 0) / n;
  const sxx = samples.reduce((s, p) => s + (p.minute - mx) ** 2, 0);
  const slope = samples.reduce((s, p) => s + (p.minute - mx) * (p.rss - my), 0) / sxx;
  const residual = samples.reduce((s, p) => s + (p.rss - my - slope * (p.minute - mx)) ** 2, 0);
  return { slope, half: 1.96 * Math.sqrt(residual / (n - 2) / sxx) };
}

const GIT_ENV = {
  ...process.env,
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  HOME: '/nonexistent',
};

/** Commits a one-file change on top of `main` (fast-import, no work tree): the next poll finds a new commit. */
function commitChange(gitdir: string, tick: number): void {
  const content = `# File 1\n\nChange ${tick} of the soak.\n`;
  const stream = [
    'commit refs/heads/main',
    `committer bench <bench@skillpin.invalid> ${1_700_000_200 + tick} +0000`,
    'data 4',
    'soak',
    'from refs/heads/main^0',
    'M 100644 inline skills/skill-0000/references/file-1.md',
    `data ${Buffer.byteLength(content)}`,
    content,
    '',
  ].join('\n');
  const run = spawnSync('git', ['--git-dir', gitdir, 'fast-import', '--quiet'], {
    input: stream,
    env: GIT_ENV,
  });
  if (run.status !== 0) throw new Error(`fast-import: ${run.stderr.toString()}`);
}

async function connect(url: string): Promise<{ client: Client; skills: SkillsClient }> {
  const client = new Client(
    { name: 'soak', version: '1' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return { client, skills: new SkillsClient(client) };
}

async function main(): Promise<void> {
  const source = syntheticRepo(workDir, 1000, 5);
  const runDir = path.join(workDir, 'soak');
  rmSync(runDir, { recursive: true, force: true });
  mkdirSync(runDir, { recursive: true });
  // A copy the bench may commit to: the synthetic repository stays as every benchmark expects it.
  const gitdir = path.join(runDir, 'repo.git');
  execFileSync('git', ['clone', '--quiet', '--bare', source.gitdir, gitdir], { env: GIT_ENV });
  const config = path.join(runDir, 'skillpin.yaml');
  writeFileSync(
    config,
    stringify({
      dataDir: path.join(runDir, 'data'),
      prompts: false,
      sources: [{ id: 'soak', path: gitdir, ref: 'main', paths: ['skills'], poll: `${syncSeconds}s` }],
    }),
  );
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      path.join(projectRoot, 'src', 'cli.ts'),
      'serve',
      '--config',
      config,
      '--http',
      '127.0.0.1:0',
    ],
    {
      cwd: projectRoot,
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, SKILLPIN_LOG_LEVEL: 'info' },
    },
  );
  let log = '';
  let syncs = 0;
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr!.on('data', (chunk: Buffer) => {
      const text = chunk.toString();
      syncs += text.split('"msg":"source updated"').length - 1;
      log = (log + text).slice(-64 * 1024);
      const match = /"url":"(http:\/\/[^"]+)"/.exec(log);
      if (match !== null) resolve(match[1]!);
    });
    child.once('exit', (code) => reject(new Error(`the server exited ${code}:\n${log}`)));
  });
  const pid = child.pid!;
  let stopping = false;
  try {
    // skill_list's default answer, against every skill in one answer.
    const probe = await connect(url);
    const answer = async (args: Record<string, unknown>) => {
      const result = await probe.client.callTool({ name: 'skill_list', arguments: args });
      return {
        chars: JSON.stringify(result).length,
        result: result.structuredContent as Record<string, unknown>,
      };
    };
    const first = await answer({});
    let all = 0;
    let cursor = first.result['nextCursor'] as string | undefined;
    const pageSkills = (first.result['skills'] as unknown[]).length;
    all += first.chars;
    while (cursor !== undefined) {
      const page = await answer({ cursor });
      all += page.chars;
      cursor = page.result['nextCursor'] as string | undefined;
    }
    console.log(
      `skill_list, 1000-skill synthetic catalog: default answer ${first.chars} bytes (${pageSkills} skills; ` +
        `~${Math.round(first.chars / 4)} tokens at 4 chars/token, ~${Math.round(first.chars / 3)} at 3) ` +
        `against ${all} bytes for every skill (all pages): ${(first.chars / all).toFixed(3)}x`,
    );
    await probe.client.close();

    let errors = 0;
    let failures = 0;
    let reads = 0;
    const firstErrors: string[] = [];
    const note = (what: string) => {
      if (firstErrors.length < 5) firstErrors.push(what);
    };
    const started = Date.now();
    const deadline = started + minutes * 60_000;
    const commits = setInterval(
      () => commitChange(gitdir, Math.round((Date.now() - started) / 1000)),
      syncSeconds * 1000,
    );
    const samples: Array<{ minute: number; rss: number }> = [];
    const sampler = setInterval(
      () => samples.push({ minute: (Date.now() - started) / 60_000, rss: rssMiB(pid) }),
      SAMPLE_MS,
    );
    let listings = 0;
    const rounds = Array.from({ length: clients }, async (_, index) => {
      const { client, skills } = await connect(url);
      let n = index * 7919;
      while (!stopping && Date.now() < deadline) {
        try {
          // As a host does: the whole listing (every page), then files of its skills, each verified.
          const { skills: entries } = await skills.list();
          listings++;
          for (let i = 0; i < READS_PER_LISTING && Date.now() < deadline; i++) {
            const entry: Skill = entries[(n += 7919) % entries.length]!;
            const files = entry.resources as Exclude<Skill['resources'], 'dynamic'>;
            try {
              await skills.read(entry, files[n % files.length]!.uri);
              reads++;
            } catch (error) {
              if (error instanceof SkillVerificationError) failures++;
              else errors++;
              note((error as Error).message.split('\n', 1)[0]!);
            }
          }
        } catch (error) {
          errors++;
          note((error as Error).message.split('\n', 1)[0]!);
        }
      }
      await client.close();
    });
    await Promise.all(rounds);
    clearInterval(commits);
    clearInterval(sampler);
    // The first minute (or tenth of the run) is warm-up: caches and the first syncs fill it.
    const warm = Math.min(1, minutes / 10);
    const steady = samples.filter((s) => s.minute >= warm);
    const { slope, half } = slopeOf(steady);
    const within = Math.abs(slope) <= half;
    console.log(
      `soak: ${minutes} min, ${clients} clients, a new commit and a sync every ${syncSeconds} s: ` +
        `${listings} full listings, ${reads} reads verified, ${syncs} syncs, ${errors} errors, ${failures} verification failures`,
    );
    console.log(
      `  RSS: ${steady[0]!.rss.toFixed(0)} MiB at ${warm.toFixed(1)} min, ${steady.at(-1)!.rss.toFixed(0)} MiB at the end ` +
        `(min ${Math.min(...steady.map((s) => s.rss)).toFixed(0)}, max ${Math.max(...steady.map((s) => s.rss)).toFixed(0)}); ` +
        `slope ${slope.toFixed(2)} ± ${half.toFixed(2)} MiB/min (95%, ${steady.length} samples): ` +
        `${within ? 'within noise' : 'NOT within noise'}`,
    );
    for (const what of firstErrors) console.log(`  first errors: ${what}`);
    process.exitCode = errors === 0 && failures === 0 && within ? 0 : 1;
  } finally {
    stopping = true;
    child.kill('SIGTERM');
  }
}

await main();
