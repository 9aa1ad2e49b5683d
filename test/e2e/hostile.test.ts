import { execFileSync, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { SkillsClient } from '@modelcontextprotocol/client/ext/skills';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { CheckReport } from '../../src/commands/checkReport.ts';
import type { StatusReport } from '../../src/commands/status.ts';
import { MAX_LARGE_BLOB_BYTES, MAX_OBJECT_BYTES } from '../../src/git/limits.ts';
import { BACKENDS, withEnv } from '../helpers/backends.ts';
import { cli } from '../helpers/cli.ts';
import { type FaultProxy, startFaultProxy } from '../helpers/faultProxy.ts';
import { fixture, PROJECT_ROOT, TEST_FIXTURES_DIR } from '../helpers/fixtures.ts';
import { type GitHttpServer, startGitHttpServer } from '../helpers/gitHttpServer.ts';
import {
  type BombRepo,
  type BuiltRepo,
  bombRepo,
  LARGE_BLOB_FILES,
  largeBlobRepo,
  largeBlobsRepo,
  withoutLargeBlobRepo,
} from '../helpers/hostilePacks.ts';
import { pushableRepo, skillMd } from '../helpers/pushable.ts';
import { CLI_ARGS, startHttp, writeConfig } from '../helpers/server.ts';
import { connectInProcess } from '../helpers/serving.ts';
import { tempDir } from '../helpers/temp.ts';
import { until } from '../helpers/until.ts';

const c2 = fixture('catalog').commits['c2']!;
const PEAK_RSS = path.join(PROJECT_ROOT, 'test', 'helpers', 'peakRss.mjs');

interface Ran {
  status: number | null;
  stdout: string;
  stderr: string;
  /** The process's peak resident set size, MiB (getrusage). */
  peakMiB: number;
  /** The peaks (VmHWM) of every process it started (git, under the cli backend) added up, MiB; tsx's esbuild not. */
  childrenPeakMiB: number;
  /** The highest of those peaks, MiB. */
  childPeakMiB: number;
}

/**
 * The highest resident set (VmHWM, KiB) of each process below `pid` seen so far, sampled until the returned
 * function is called, which gives their sum and the highest, in MiB. A child is counted once it runs its own
 * program: tsx's esbuild is not, nor a fork not yet exec'd (it still shows node's command line).
 */
function childrenPeaks(pid: number) {
  const peaks = new Map<number, number>();
  const look = () => {
    for (const child of descendants(pid)) {
      try {
        const command = readFileSync(`/proc/${child}/cmdline`, 'utf8');
        if (command.includes('esbuild') || command.startsWith(process.execPath)) continue;
        const kib = Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child}/status`, 'utf8'))?.[1] ?? 0);
        peaks.set(child, Math.max(peaks.get(child) ?? 0, kib));
      } catch {
        // It ended meanwhile.
      }
    }
  };
  const timer = setInterval(look, 25);
  return () => {
    clearInterval(timer);
    const all = [...peaks.values()];
    return {
      childrenPeakMiB: Math.round(all.reduce((sum, kib) => sum + kib, 0) / 1024),
      childPeakMiB: Math.round(Math.max(0, ...all) / 1024),
    };
  };
}

/** `skillpin <args>` in a child process of its own; `fileSizeKiB` runs it under `ulimit -f` (a full disk). */
function skillpin(args: string[], options: { env?: Record<string, string>; fileSizeKiB?: number } = {}) {
  const node = [process.execPath, '--import', PEAK_RSS, ...CLI_ARGS, ...args];
  const [command, ...rest] =
    options.fileSizeKiB === undefined
      ? node
      : ['bash', '-c', `ulimit -f ${options.fileSizeKiB}; exec "$0" "$@"`, ...node];
  return new Promise<Ran>((resolve, reject) => {
    const child = spawn(command!, rest, { cwd: PROJECT_ROOT, env: { ...process.env, ...options.env } });
    const children = childrenPeaks(child.pid!);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('close', (status) => {
      const kib = /skillpin-peak-rss-kib (\d+)/.exec(stderr)?.[1];
      resolve({
        status,
        stdout,
        stderr,
        peakMiB: Math.round(Number(kib) / 1024),
        ...children(),
      });
    });
  });
}

/** What `skillpin sync` printed for each source (its last lines): `<id>: ...`. */
const outcomes = (stderr: string) =>
  Object.fromEntries(
    stderr
      .split('\n')
      .map((line) => /^([a-z0-9.-]+): (now at|unchanged at|FAILED) (.*)$/.exec(line))
      .filter((match) => match !== null)
      .map((match) => [match[1], `${match[2]} ${match[3]}`]),
  );

const packDirOf = (config: string, id: string) =>
  path.join(path.dirname(config), 'data', 'repos', `${id}.git`, 'objects', 'pack');
/** Files of a store's pack folder that are not part of a whole pack (temporary, half-written, orphaned). */
const loose = (dir: string) => {
  const files = existsSync(dir) ? readdirSync(dir) : [];
  return files.filter((file) => {
    const base = /^(pack-[0-9a-f]+)\.(pack|idx|rev|promisor)$/.exec(file)?.[1];
    return base === undefined || !files.includes(`${base}.pack`) || !files.includes(`${base}.idx`);
  });
};

describe('hostile remotes, end to end (each case a skillpin process of its own)', () => {
  let root: string;
  let git: GitHttpServer;
  let bombs: GitHttpServer;
  let bomb: BombRepo;
  let proxy: FaultProxy;
  beforeAll(async () => {
    root = tempDir('skillpin-e2e-hostile-');
    execFileSync('git', [
      'clone',
      '--quiet',
      '--bare',
      fixture('catalog').gitdir,
      path.join(root, 'catalog.git'),
    ]);
    git = await startGitHttpServer({ root });
    bomb = await bombRepo();
    bombs = await startGitHttpServer({ root: TEST_FIXTURES_DIR });
    proxy = await startFaultProxy(git.url);
  }, 120_000);
  afterAll(async () => {
    await proxy.close();
    await bombs.close();
    await git.close();
  });

  it('an endless pack and a compression bomb are refused in bounded memory; the healthy source syncs', async () => {
    const healthy = writeConfig({
      sources: [{ id: 'healthy', url: `${git.url}/catalog.git`, commit: c2 }],
    });
    const baseline = await skillpin(['sync', '--config', healthy]);
    expect([baseline.status, outcomes(baseline.stderr)]).toEqual([0, { healthy: `now at ${c2}` }]);

    proxy.setFault({ kind: 'endless-pack' });
    const hostile = writeConfig({
      sync: { maxFetchBytes: 64 * 1024 * 1024 },
      sources: [
        { id: 'healthy', url: `${git.url}/catalog.git`, commit: c2 },
        { id: 'endless', url: `${proxy.url}/catalog.git`, commit: c2 },
        { id: 'bomb', url: bombs.urlFor('bomb.git'), commit: bomb.commit },
      ],
    });
    const ran = await skillpin(['sync', '--config', hostile]);
    proxy.setFault({ kind: 'pass' });
    expect([ran.status, outcomes(ran.stderr)]).toEqual([
      2,
      {
        healthy: `now at ${c2}`,
        endless: `FAILED source-too-large: fetching ${c2} from ${proxy.url}/catalog.git: the transfer passed 67108864 bytes (sync.maxFetchBytes)`,
        bomb: `FAILED source-too-large: fetching ${bomb.commit} from ${bombs.urlFor('bomb.git')}: the blobs over 67108864 bytes of the transfer inflate to more than 268435456 bytes together`,
      },
    ]);
    // The bound: what the same command takes for the healthy source alone, and 160 MiB (64 MiB came over the
    // endless stream, 1 GiB is what the bomb inflates to).
    expect(ran.peakMiB).toBeLessThan(baseline.peakMiB + 160);
    expect([loose(packDirOf(hostile, 'endless')), loose(packDirOf(hostile, 'bomb'))]).toEqual([[], []]);
    expect(readdirSync(packDirOf(hostile, 'bomb'))).toEqual([]);
  });

  it('a remote that echoes the credentials: no log line, state.json or status report holds them', async () => {
    const token = `tok-${randomBytes(12).toString('hex')}`;
    const basic = Buffer.from(`x-access-token:${token}`).toString('base64');
    proxy.setFault({ kind: 'echo-credentials' });
    const config = writeConfig({
      sources: [{ id: 'echo', url: `${proxy.url}/catalog.git`, ref: 'main', token: '${ECHO_TOKEN}' }],
    });
    const env = { ECHO_TOKEN: token };
    const synced = await skillpin(['sync', '--config', config], { env });
    const status = await skillpin(['status', '--config', config, '--json'], { env });
    proxy.setFault({ kind: 'pass' });
    // The remote got the credentials and sent them back; nothing of ours repeats them.
    expect(proxy.seen.some((request) => request.authorization === `Basic ${basic}`)).toBe(true);
    const detail = `listing the refs of ${proxy.url}/catalog.git: the remote answered with an error (its words are in the log)`;
    expect([synced.status, outcomes(synced.stderr)]).toEqual([
      2,
      { echo: `FAILED source-fetch-failed: ${detail}` },
    ]);
    expect(synced.stderr).toContain('"log":"');
    expect(synced.stderr).toContain('Authorization: ***');
    const report = JSON.parse(status.stdout) as { failures: unknown[] };
    expect(report.failures).toEqual([{ id: 'echo', reason: 'source-fetch-failed', detail }]);
    const state = readFileSync(path.join(path.dirname(config), 'data', 'state.json'), 'utf8');
    for (const text of [synced.stderr, status.stdout, status.stderr, state])
      for (const secret of [token, basic, basic.slice(0, 24)]) expect(text).not.toContain(secret);
  });

  // The one case run under both backends here: the isomorphic one writes the pack itself, in this process.
  it.each(['cli', 'isomorphic'])(
    'a full disk (a file-size limit) fails source-disk-full and leaves no part of a pack (%s backend)',
    async (backend) => {
      const env = { SKILLPIN_GIT_BACKEND: backend };
      const served = tempDir('skillpin-e2e-full-');
      const repo = pushableRepo(served, 'big');
      // 3 MiB that do not compress: the pack cannot be written under a 1 MiB file-size limit.
      const commit = repo.push({
        'alpha/SKILL.md': skillMd('alpha', 'big'),
        'alpha/noise.txt': randomBytes(3 * 1024 * 1024).toString('base64'),
      });
      const server = await startGitHttpServer({ root: served });
      try {
        const url = server.urlFor('big.git');
        const config = writeConfig({ sources: [{ id: 'big', url, commit }] });
        const ran = await skillpin(['sync', '--config', config], { env, fileSizeKiB: 1024 });
        expect([ran.status, outcomes(ran.stderr)]).toEqual([
          2,
          {
            big: `FAILED source-disk-full: fetching ${commit} from ${url}: a file-size limit stops writes in dataDir`,
          },
        ]);
        expect(loose(packDirOf(config, 'big'))).toEqual([]);
        // With room again, the same dataDir syncs.
        const again = await skillpin(['sync', '--config', config], { env });
        expect([again.status, outcomes(again.stderr)]).toEqual([0, { big: `now at ${commit}` }]);
      } finally {
        await server.close();
      }
    },
  );

  it('kill -9 in the middle of a transfer: the next start removes what it left, and syncs', async () => {
    // The pack's first 256 bytes come at once, then one byte every 50 ms: the transfer takes a minute or more.
    proxy.setFault({ kind: 'drip', everyMs: 50, afterPack: 256, packOnly: true });
    const config = writeConfig({
      sources: [{ id: 'skills', url: `${proxy.url}/catalog.git`, commit: c2 }],
    });
    const packDir = packDirOf(config, 'skills');
    const server = await startHttp(config);
    // A part of the pack is on disk, and the rest is still to come.
    const partial = await until('a part of a pack written', () =>
      (existsSync(packDir) ? readdirSync(packDir) : []).find(
        (file) =>
          file.startsWith('tmp_pack_') &&
          (statSync(path.join(packDir, file), { throwIfNoEntry: false })?.size ?? 0) > 0,
      ),
    );
    // The server and every process it started (git, under the cli backend) die at once.
    const family = descendants(server.child.pid!);
    server.child.kill('SIGKILL');
    for (const pid of family) killQuietly(pid);
    await until(
      'the server to be gone',
      () => server.child.exitCode !== null || server.child.signalCode !== null,
    );
    expect(readdirSync(packDir)).toContain(partial);
    proxy.setFault({ kind: 'pass' });
    const ran = await skillpin(['sync', '--config', config]);
    expect([ran.status, outcomes(ran.stderr)]).toEqual([0, { skills: `now at ${c2}` }]);
    const swept = ran.stderr
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { msg: string; removed?: string[] })
      .find((line) => line.msg === 'removed what an interrupted transfer left in the store');
    expect(swept?.removed).toContain(`objects/pack/${partial}`);
    expect(loose(packDir)).toEqual([]);
  });
});

/** Every process below `pid`, read from /proc (before it dies: then they are reparented). */
function descendants(pid: number): number[] {
  const parents = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // Gone meanwhile.
    }
  }
  const found: number[] = [];
  const walk = (parent: number) => {
    for (const [child, ppid] of parents)
      if (ppid === parent) {
        found.push(child);
        walk(child);
      }
  };
  walk(pid);
  return found;
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

describe.each(BACKENDS)('a skill holding a blob over 64 MiB, $name backend', ({ name }) => {
  let server: GitHttpServer;
  let large: BuiltRepo;
  let larger: BuiltRepo;
  beforeAll(async () => {
    large = await largeBlobRepo();
    larger = await largeBlobsRepo();
    server = await startGitHttpServer({ root: TEST_FIXTURES_DIR });
    // status and check run in this process: their logs would only clutter the test output.
    vi.stubEnv('SKILLPIN_LOG_LEVEL', 'silent');
  }, 120_000);
  afterAll(async () => {
    vi.unstubAllEnvs();
    await server.close();
  });
  const configFor = (id: string, url: string, commit: string) =>
    writeConfig({ git: { backend: name }, sources: [{ id, url, commit, paths: ['skills'] }] });

  it('is refused alone (too-large): the source serves that commit, and memory stays far under the blob', async () => {
    const url = server.urlFor('large-blob.git');
    const config = configFor('large', url, large.commit);
    const synced = await skillpin(['sync', '--config', config]);
    expect([synced.status, outcomes(synced.stderr)]).toEqual([0, { large: `now at ${large.commit}` }]);
    // The same sync without the blob: what the process and its children take for the rest.
    const small = await withoutLargeBlobRepo();
    const baseline = await skillpin([
      'sync',
      '--config',
      configFor('small', server.urlFor('without-large-blob.git'), small.commit),
    ]);
    expect([baseline.status, outcomes(baseline.stderr)]).toEqual([0, { small: `now at ${small.commit}` }]);
    // 64 MiB + 1 came through (inflated to be hashed, by this process or by git): neither held it whole.
    expect(synced.peakMiB).toBeLessThan(baseline.peakMiB + 56);
    expect(synced.childPeakMiB).toBeLessThan(32);
    expect(synced.childrenPeakMiB).toBeLessThan(baseline.childrenPeakMiB + 32);
    const tooLarge = {
      path: 'skills/large',
      reason: 'too-large',
      severity: 'error',
      detail: `${LARGE_BLOB_FILES['skills/large/SKILL.md'].length + MAX_OBJECT_BYTES + 1} bytes; the limit is 16777216`,
    };

    const status = JSON.parse((await cli('status', '--config', config, '--json')).stdout) as StatusReport;
    expect(
      status.sources.map((s) => [
        s.id,
        s.current?.commit,
        s.current?.skills,
        s.current?.problems,
        s.lastError,
      ]),
    ).toEqual([['large', large.commit, 1, [tooLarge], null]]);

    const { client, close } = await connectInProcess(config, 'modern');
    try {
      const skills = new SkillsClient(client);
      const entries = (await skills.list()).skills;
      expect(entries.map((entry) => [entry.uri, entry._meta?.['dev.skillpin/digest']])).toEqual([
        [`skill://large/${large.commit}/skills/good/SKILL.md`, goodDigest()],
      ]);
      for (const file of ['SKILL.md', 'notes.md'])
        expect((await skills.read(entries[0]!, file)).verified).toBe(true);
    } finally {
      await close();
    }

    const checked = await withEnv({ SKILLPIN_GIT_BACKEND: name }, () =>
      cli('check', url, '--commit', large.commit, '--paths', 'skills', '--json'),
    );
    const report = JSON.parse(checked.stdout) as CheckReport;
    expect([
      checked.status,
      report.commit,
      report.skills.map((skill) => skill.path),
      report.problems,
    ]).toEqual([
      1,
      large.commit,
      ['skills/good'],
      [{ source: 'large-blob', commit: large.commit, ...tooLarge }],
    ]);
  });

  it('past MAX_LARGE_BLOB_BYTES together, the source is source-too-large and keeps nothing of the transfer', async () => {
    const url = server.urlFor('large-blobs.git');
    const config = configFor('larger', url, larger.commit);
    const synced = await skillpin(['sync', '--config', config]);
    const detail = `fetching ${larger.commit} from ${url}: the blobs over ${MAX_OBJECT_BYTES} bytes of the transfer inflate to more than ${MAX_LARGE_BLOB_BYTES} bytes together`;
    expect([synced.status, outcomes(synced.stderr)]).toEqual([
      2,
      { larger: `FAILED source-too-large: ${detail}` },
    ]);
    expect(synced.childPeakMiB).toBeLessThan(32);
    const status = JSON.parse((await cli('status', '--config', config, '--json')).stdout) as StatusReport;
    expect(status.failures).toEqual([{ id: 'larger', reason: 'source-too-large', detail }]);
    expect(loose(packDirOf(config, 'larger'))).toEqual([]);
  });
});

/** The aggregate digest of skills/good as the README defines it, from the bytes the repository was built of. */
function goodDigest(): string {
  const hash = createHash('sha256');
  for (const [file, bytes] of [
    ['SKILL.md', LARGE_BLOB_FILES['skills/good/SKILL.md']],
    ['notes.md', LARGE_BLOB_FILES['skills/good/notes.md']],
  ] as const)
    hash.update(`sha256:${createHash('sha256').update(bytes).digest('hex')} ${bytes.length} ${file}\n`);
  return `sha256:${hash.digest('hex')}`;
}
