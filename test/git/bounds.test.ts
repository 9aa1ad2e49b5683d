import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchCommit, openStore, resolveRemoteRef } from '../../src/git/index.ts';
import { gitFailure } from '../helpers/gitFailure.ts';
import { BACKENDS } from '../helpers/backends.ts';
import { PROJECT_ROOT, TEST_FIXTURES_DIR } from '../helpers/fixtures.ts';
import { type GitHttpServer, startGitHttpServer } from '../helpers/gitHttpServer.ts';
import { type BombRepo, bombRepo, manyObjectsRepo } from '../helpers/hostilePacks.ts';
import { pidsRunning } from '../helpers/processes.ts';
import { drippingRemote, endlessRefsRemote } from '../helpers/slowRemotes.ts';
import { tempDir } from '../helpers/temp.ts';
import { until } from '../helpers/until.ts';

const MiB = 1024 * 1024;

/** The highest resident set (VmHWM, bytes) of each process whose command line holds one of `parts`, seen so far. */
function peakWatcher(parts: readonly string[]) {
  const peaks = new Map<number, number>();
  const look = () => {
    for (const pid of new Set(parts.flatMap((part) => pidsRunning(part)))) {
      try {
        const kib = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
        if (kib !== undefined) peaks.set(pid, Math.max(peaks.get(pid) ?? 0, Number(kib) * 1024));
      } catch {
        // It ended meanwhile.
      }
    }
  };
  const timer = setInterval(look, 25);
  return {
    /** The peak of each process seen. */
    stop(): number[] {
      clearInterval(timer);
      return [...peaks.values()];
    },
  };
}

describe('git children are bounded under the cli backend', () => {
  it('an endless ref listing: git runs out of the memory it may take (git.maxMemory), source-too-large', async () => {
    const remote = await endlessRefsRemote();
    const gitdir = path.join(tempDir('skillpin-bounds-'), 'repo.git');
    const repo = await openStore(gitdir, { backend: 'cli', maxMemoryBytes: 128 * MiB });
    const watcher = peakWatcher([gitdir, remote.url]);
    try {
      const error = await gitFailure(resolveRemoteRef(repo, { url: remote.url, deadlineMs: 20_000 }, 'main'));
      const peaks = watcher.stop();
      expect(error).toEqual({
        code: 'source-too-large',
        message: `listing the refs of ${remote.url}: git ran out of the ${128 * MiB} bytes of memory it may take (git.maxMemory)`,
      });
      // git ls-remote, git-remote-http and the watcher beside each (a shell), each under its own 128 MiB; the
      // listing alone would have taken git-remote-http to gigabytes within the deadline.
      expect(peaks.length).toBe(4);
      expect(Math.max(...peaks)).toBeLessThan(128 * MiB);
      expect(peaks.reduce((sum, peak) => sum + peak, 0)).toBeLessThan(160 * MiB);
    } finally {
      watcher.stop();
      await repo.close();
      await remote.close();
    }
  });

  it('closing the repository ends a ref listing hanging on a dripping remote, and every process it started', async () => {
    const remote = await drippingRemote(200);
    const gitdir = path.join(tempDir('skillpin-bounds-'), 'repo.git');
    const repo = await openStore(gitdir, { backend: 'cli' });
    try {
      const listing = gitFailure(resolveRemoteRef(repo, { url: remote.url, timeoutMs: 60_000 }, 'main'));
      await until('git-remote-http to run', () => pidsRunning(remote.url).length > 0);
      expect(pidsRunning(gitdir).length).toBeGreaterThan(0);
      await repo.close();
      expect(await listing).toEqual({
        code: 'source-fetch-failed',
        message: `listing the refs of ${remote.url}: stopped: the repository was closed before the transfer ended`,
      });
      expect([pidsRunning(gitdir), pidsRunning(remote.url)]).toEqual([[], []]);
    } finally {
      await remote.close();
    }
  });

  it('a process killed with -9 leaves no git running: its children end with it', async () => {
    const remote = await drippingRemote(200);
    const gitdir = path.join(tempDir('skillpin-bounds-'), 'repo.git');
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        path.join(PROJECT_ROOT, 'test', 'helpers', 'hangingListing.ts'),
        gitdir,
        remote.url,
      ],
      { cwd: PROJECT_ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    try {
      await until('git-remote-http to run', () => pidsRunning(remote.url).length > 0, 30_000);
      expect(pidsRunning(gitdir).length).toBeGreaterThan(0);
      child.kill('SIGKILL');
      await until(
        'every git process to end',
        () => pidsRunning(remote.url).length + pidsRunning(gitdir).length === 0,
      );
    } finally {
      child.kill('SIGKILL');
      await remote.close();
    }
  });
});

describe.each(BACKENDS)('a fetch is bounded in objects, $name backend', ({ name, settings }) => {
  let server: GitHttpServer;
  let commit: string;
  beforeAll(async () => {
    const root = tempDir('skillpin-many-');
    commit = manyObjectsRepo(root, 5000);
    server = await startGitHttpServer({ root, config: { 'uploadpack.allowAnySHA1InWant': 'true' } });
  });
  afterAll(async () => server.close());

  it('a pack of 5,000 tiny objects over sync.maxFetchObjects (1,000) is source-too-large, and nothing stays', async () => {
    const repo = await openStore(path.join(tempDir('skillpin-bounds-'), 'repo.git'), settings);
    const url = server.urlFor('many.git');
    const error = await gitFailure(fetchCommit(repo, { url, maxFetchObjects: 1000 }, commit));
    expect(error).toEqual({
      code: 'source-too-large',
      message: `fetching ${commit} from ${url}: the transfer holds more than 1000 objects (sync.maxFetchObjects)`,
    });
    expect(readdirSync(path.join(repo.gitdir, 'objects', 'pack'))).toEqual([]);
    // Under the cap, the same commit comes whole.
    await fetchCommit(repo, { url, maxFetchObjects: 6000 }, commit);
    expect(readdirSync(path.join(repo.gitdir, 'objects', 'pack')).length).toBeGreaterThan(0);
    await repo.close();
    expect(name).toBe(settings.backend);
  });
});

describe('the isomorphic backend reads a ref listing of at most 16 MiB', () => {
  it('an endless ref listing is source-too-large once 16 MiB came', async () => {
    const remote = await endlessRefsRemote();
    const repo = await openStore(path.join(tempDir('skillpin-bounds-'), 'repo.git'), {
      backend: 'isomorphic',
    });
    try {
      const error = await gitFailure(resolveRemoteRef(repo, { url: remote.url }, 'main'));
      expect(error).toEqual({
        code: 'source-too-large',
        message: `listing the refs of ${remote.url}: the remote's ref listing passed ${16 * MiB} bytes`,
      });
      // What the remote wrote before the connection closed: the bound and what socket buffers hold (a few MiB).
      expect(remote.sent()).toBeLessThan(24 * MiB);
    } finally {
      await repo.close();
      await remote.close();
    }
  });
});

describe.each(BACKENDS)(
  'a compression bomb slower to inflate than sync.deadline, $name backend',
  ({ settings }) => {
    let bomb: BombRepo;
    let server: GitHttpServer;
    beforeAll(async () => {
      bomb = await bombRepo();
      server = await startGitHttpServer({ root: TEST_FIXTURES_DIR });
    }, 120_000);
    afterAll(async () => server.close());

    it('is source-too-large, not a timeout, and leaves nothing', async () => {
      const repo = await openStore(path.join(tempDir('skillpin-bounds-'), 'repo.git'), settings);
      const url = server.urlFor('bomb.git');
      // git would inflate the 1 GiB object to hash it, longer than the deadline given here (35 s on a busy
      // 2-core machine): the object's header says at once that it is too large.
      const error = await gitFailure(fetchCommit(repo, { url, deadlineMs: 4000 }, bomb.commit));
      expect(error).toEqual({
        code: 'source-too-large',
        message: `fetching ${bomb.commit} from ${url}: the blobs over 67108864 bytes of the transfer inflate to more than 268435456 bytes together`,
      });
      expect(readdirSync(path.join(repo.gitdir, 'objects', 'pack'))).toEqual([]);
      await repo.close();
    });
  },
);
