import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCatalog, type Catalog } from '../../src/catalog/index.ts';
import { loadConfig, type Config } from '../../src/config/index.ts';
import { silentLogger } from '../../src/shared/log.ts';
import { indexDir } from '../../src/sync/source.ts';
import { readState } from '../../src/sync/state.ts';
import { createSyncWorker, retryDelay, type SyncWorker } from '../../src/sync/worker.ts';
import { startFaultProxy, type Fault } from '../helpers/faultProxy.ts';
import { startGitHttpServer, type GitHttpServer } from '../helpers/gitHttpServer.ts';
import { pushableRepo, skillMd } from '../helpers/pushable.ts';
import { makeRepo } from '../helpers/repo.ts';
import { writeConfig } from '../helpers/server.ts';

const until = async (what: string, check: () => boolean, timeoutMs = 10_000) => {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
};
const current = (catalog: Catalog, id = 'skills') =>
  catalog.state.sources.find((s) => s.id === id)?.current.commit;
const retained = (catalog: Catalog, id = 'skills') =>
  catalog.state.sources.find((s) => s.id === id)?.retained.map((ns) => ns.commit);

function workerFor(config: Config) {
  const catalog = createCatalog();
  return {
    catalog,
    worker: createSyncWorker({ config, catalog, logger: silentLogger(), random: () => 0.5 }),
  };
}

describe('retryDelay', () => {
  it('doubles from the minimum up to the maximum, with jitter in [0.5, 1.5)', () => {
    expect([1, 2, 3, 4, 10].map((attempt) => retryDelay(attempt, 1000, 5000, () => 0.5))).toEqual([
      1000, 2000, 4000, 5000, 5000,
    ]);
    expect(retryDelay(1, 1000, 5000, () => 0)).toBe(500);
    expect(retryDelay(1, 1000, 5000, () => 0.999)).toBe(1499);
  });
});

describe('the sync worker against a remote that fails on cue', () => {
  let root: string;
  let git: GitHttpServer;
  let proxy: Awaited<ReturnType<typeof startFaultProxy>>;
  let repo: ReturnType<typeof pushableRepo>;
  let catalog: Catalog;
  let worker: SyncWorker;
  let config: Config;
  let first: string;

  beforeAll(async () => {
    root = mkdtempSync(path.join(tmpdir(), 'skillpin-faults-'));
    repo = pushableRepo(root, 'skills');
    first = repo.push({ 'alpha/SKILL.md': skillMd('alpha', 'version 1') });
    git = await startGitHttpServer({ root });
    proxy = await startFaultProxy(git.url);
    config = loadConfig(
      writeConfig({
        sync: { timeout: '500ms', retryMin: '50ms', retryMax: '200ms' },
        sources: [{ id: 'skills', url: `${proxy.url}/skills.git`, ref: 'main', poll: '1h', keep: 2 }],
      }),
    );
    ({ catalog, worker } = workerFor(config));
    await worker.start();
  });
  afterAll(async () => {
    await worker.stop();
    await proxy.close();
    await git.close();
  });

  it('serves the branch tip at start', () => {
    expect(current(catalog)).toBe(first);
  });

  const faults: Array<[string, Fault, string]> = [
    ['HTTP 401', { kind: 'status', status: 401 }, 'source-auth-failed'],
    ['HTTP 403', { kind: 'status', status: 403 }, 'source-auth-failed'],
    ['HTTP 404', { kind: 'status', status: 404 }, 'source-repository-not-found'],
    ['HTTP 500', { kind: 'status', status: 500 }, 'source-http-error'],
    ['HTTP 503', { kind: 'status', status: 503 }, 'source-http-error'],
    ['a remote that stops answering', { kind: 'hang' }, 'source-timeout'],
    ['an empty pack', { kind: 'empty-pack' }, 'source-pack-invalid'],
    ['a truncated pack', { kind: 'truncate-pack', bytes: 200 }, 'source-pack-invalid'],
  ];
  let version = 1;
  it.each(faults)(
    'on %s: reports %s, keeps the last good commit serving, retries with backoff and recovers',
    async (_what, fault, reason) => {
      const before = current(catalog)!;
      const next = repo.push({ 'alpha/SKILL.md': skillMd('alpha', `version ${++version}`) });
      proxy.setFault(fault);
      const outcome = await worker.trigger('skills', 'test')!;
      expect(outcome).toMatchObject({ ok: false, reason, serving: before });
      expect(current(catalog)).toBe(before);
      expect(catalog.state.failures).toEqual([expect.objectContaining({ id: 'skills', reason })]);
      expect((await readState(config.dataDir)).sources['skills']?.lastError?.reason).toBe(reason);
      proxy.setFault({ kind: 'pass' });
      await until('the retry to bring the new commit', () => current(catalog) === next);
      expect(catalog.state.failures).toEqual([]);
    },
  );

  it('keeps `keep` previous commits serving and forgets older ones (index files removed)', async () => {
    const commits = [current(catalog)!];
    for (let i = 0; i < 3; i++) {
      commits.push(repo.push({ 'alpha/SKILL.md': skillMd('alpha', `retention ${i}`) }));
      expect(await worker.trigger('skills', 'test')).toMatchObject({ ok: true, changed: true });
    }
    expect(current(catalog)).toBe(commits[3]);
    expect(retained(catalog)).toEqual([commits[2], commits[1]]);
    expect(catalog.namespace('skills', commits[0]!)).toBeUndefined();
    const files = readdirSync(indexDir(config.dataDir, 'skills'));
    expect(files).toContain(`${commits[3]}.json`);
    expect(files).not.toContain(`${commits[0]}.json`);
    expect((await readState(config.dataDir)).sources['skills']).toMatchObject({
      current: commits[3],
      retained: [commits[2], commits[1]],
    });
  });

  it('fetches only the objects the store lacks after a one-file change', async () => {
    const packs = () =>
      readdirSync(path.join(config.dataDir, 'repos', 'skills.git', 'objects', 'pack')).filter((f) =>
        f.endsWith('.pack'),
      );
    const before = new Set(packs());
    repo.push({
      'alpha/big.txt': randomBytes(200_000).toString('base64'),
      'alpha/SKILL.md': skillMd('alpha', 'big'),
    });
    await worker.trigger('skills', 'test');
    repo.push({ 'alpha/SKILL.md': skillMd('alpha', 'small change') });
    const afterBig = new Set(packs());
    await worker.trigger('skills', 'test');
    const newest = packs().filter((p) => !afterBig.has(p) && !before.has(p));
    expect(newest.length).toBe(1);
    const size = readdirSync(path.join(config.dataDir, 'repos', 'skills.git', 'objects', 'pack')).length;
    expect(size).toBeGreaterThan(0);
    const packBytes = execFileSync(
      'du',
      ['-b', path.join(config.dataDir, 'repos', 'skills.git', 'objects', 'pack', newest[0]!)],
      { encoding: 'utf8' },
    );
    // The big (incompressible, 266 KB) blob is not sent again: the incremental pack is a few hundred bytes.
    expect(Number(packBytes.split('\t')[0])).toBeLessThan(2_000);
    const bigPack = [...afterBig].find((p) => !before.has(p))!;
    const bigBytes = execFileSync(
      'du',
      ['-b', path.join(config.dataDir, 'repos', 'skills.git', 'objects', 'pack', bigPack)],
      { encoding: 'utf8' },
    );
    expect(Number(bigBytes.split('\t')[0])).toBeGreaterThan(200_000);
  });

  it('follows a branch that was force-pushed to a new history', async () => {
    const rewritten = repo.forcePushOrphan({ 'beta/SKILL.md': skillMd('beta', 'new history') });
    expect(await worker.trigger('skills', 'test')).toMatchObject({ ok: true, commit: rewritten });
    expect(catalog.listed()[0]!.skills.map((s) => s.name)).toEqual(['beta']);
  });

  it('merges triggers for a source that is already syncing into one follow-up sync', async () => {
    const pushed = repo.push({ 'alpha/SKILL.md': skillMd('alpha', 'merged') });
    const refsBefore = git.requests.filter((r) => r.path.endsWith('/info/refs')).length;
    const outcomes = await Promise.all(Array.from({ length: 6 }, () => worker.trigger('skills', 'burst')!));
    expect(new Set(outcomes.map((o) => o.ok && o.commit))).toEqual(new Set([pushed]));
    const refRequests = git.requests.filter((r) => r.path.endsWith('/info/refs')).length - refsBefore;
    // One sync resolves the ref once and fetches (two info/refs requests at most); the merged follow-up once more.
    expect(refRequests).toBeLessThanOrEqual(4);
  });

  it('reports a ref that no longer exists and keeps serving', async () => {
    const before = current(catalog);
    repo.deleteBranch('main');
    expect(await worker.trigger('skills', 'test')).toMatchObject({
      ok: false,
      reason: 'source-ref-not-found',
      serving: before,
    });
    expect(current(catalog)).toBe(before);
    repo.push({ 'beta/SKILL.md': skillMd('beta', 'back') });
  });
});

describe('other faults', () => {
  it('reports an unreachable remote and a pinned commit that is gone after a force-push', async () => {
    const root = mkdtempSync(path.join(tmpdir(), 'skillpin-gone-'));
    const repo = pushableRepo(root, 'skills');
    const gone = repo.push({ 'alpha/SKILL.md': skillMd('alpha', 'soon gone') });
    repo.forcePushOrphan({ 'beta/SKILL.md': skillMd('beta', 'replaces it') });
    const git = await startGitHttpServer({ root, config: { 'uploadpack.allowAnySHA1InWant': 'true' } });
    const config = loadConfig(
      writeConfig({
        sync: { timeout: '500ms', retryMin: '1h', retryMax: '1h' },
        sources: [
          { id: 'closed', url: 'http://127.0.0.1:9/none.git', ref: 'main' },
          { id: 'pinned', url: git.urlFor('skills.git'), commit: gone },
          { id: 'healthy', url: git.urlFor('skills.git'), ref: 'main' },
        ],
      }),
    );
    const { catalog, worker } = workerFor(config);
    await worker.start();
    expect(catalog.state.failures.map((f) => [f.id, f.reason])).toEqual([
      ['closed', 'source-unreachable'],
      ['pinned', 'source-commit-not-found'],
    ]);
    // The failures cost only their sources.
    expect(catalog.listed().map((ns) => [ns.source, ns.skills.map((s) => s.name)])).toEqual([
      ['healthy', ['beta']],
    ]);
    await worker.stop();
    await git.close();
  });

  it('reports a full disk and keeps the last good commit serving', async () => {
    const mountPoint = mkdtempSync(path.join(tmpdir(), 'skillpin-tmpfs-'));
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', mountPoint]);
    const root = mkdtempSync(path.join(tmpdir(), 'skillpin-disk-'));
    const repo = pushableRepo(root, 'skills');
    const good = repo.push({ 'alpha/SKILL.md': skillMd('alpha', 'fits') });
    const git = await startGitHttpServer({ root });
    try {
      const config = loadConfig(
        writeConfig({
          dataDir: mountPoint,
          sync: { retryMin: '1h', retryMax: '1h' },
          sources: [{ id: 'skills', url: git.urlFor('skills.git'), ref: 'main' }],
        }),
      );
      const { catalog, worker } = workerFor(config);
      await worker.start();
      expect(current(catalog)).toBe(good);
      repo.push({ 'alpha/noise.bin': randomBytes(3 * 1024 * 1024).toString('base64') });
      expect(await worker.trigger('skills', 'test')).toMatchObject({
        ok: false,
        reason: 'source-disk-full',
        serving: good,
      });
      expect(current(catalog)).toBe(good);
      await worker.stop();
    } finally {
      await git.close();
      execFileSync('umount', [mountPoint]);
    }
  });
});

describe('a local repository', () => {
  it('is followed in place: commits made by another program are found by the next sync', async () => {
    const { dir, commit } = makeRepo({ 'alpha/SKILL.md': skillMd('alpha', 'one') });
    const config = loadConfig(
      writeConfig({ sources: [{ id: 'local', path: dir, ref: 'main', poll: '1h' }] }),
    );
    const { catalog, worker } = workerFor(config);
    await worker.start();
    expect(current(catalog, 'local')).toBe(commit);
    // Read a file so the store's memory of which loose objects exist is filled, then commit more beside it.
    const ns = catalog.listed()[0]!;
    await ns.readBlob(ns.skills[0]!.files[0]!.blob);
    writeFileSync(path.join(dir, 'beta.md'), 'two\n');
    mkdirSync(path.join(dir, 'beta'));
    writeFileSync(path.join(dir, 'beta', 'SKILL.md'), skillMd('beta', 'two'));
    const env = {
      ...process.env,
      GIT_AUTHOR_NAME: 't',
      GIT_AUTHOR_EMAIL: 't@t',
      GIT_COMMITTER_NAME: 't',
      GIT_COMMITTER_EMAIL: 't@t',
    };
    execFileSync('git', ['-C', dir, 'add', '--all'], { env });
    execFileSync('git', ['-C', dir, 'commit', '-q', '-m', 'two'], { env });
    const next = execFileSync('git', ['-C', dir, 'rev-parse', 'HEAD'], { encoding: 'utf8' }).trim();
    expect(await worker.trigger('local', 'test')).toMatchObject({ ok: true, commit: next, changed: true });
    expect(catalog.listed()[0]!.skills.map((s) => s.name)).toEqual(['alpha', 'beta']);
    await worker.stop();
  });
});

describe('restarts', () => {
  it('serve the last good catalog at once without the network or the objects, and rebuild a corrupt index', async () => {
    const root = mkdtempSync(path.join(tmpdir(), 'skillpin-restart-'));
    const repo = pushableRepo(root, 'skills');
    const a = repo.push({ 'alpha/SKILL.md': skillMd('alpha', 'a') });
    const git = await startGitHttpServer({ root });
    const proxy = await startFaultProxy(git.url);
    const file = writeConfig({
      sync: { timeout: '1h', retryMin: '1h', retryMax: '1h' },
      sources: [{ id: 'skills', url: `${proxy.url}/skills.git`, ref: 'main', keep: 1 }],
    });
    const config = loadConfig(file);
    const run1 = workerFor(config);
    await run1.worker.start();
    const b = repo.push({ 'alpha/SKILL.md': skillMd('alpha', 'b') });
    await run1.worker.trigger('skills', 'test');
    await run1.worker.stop();
    const indexed = run1.catalog.namespace('skills', b)!.skills;

    // The remote now never answers (and the timeout is an hour), and the object files are gone: start() still
    // resolves, serving listing and entries from dataDir alone. Waiting on the network would hang this test.
    proxy.setFault({ kind: 'hang' });
    const objects = path.join(config.dataDir, 'repos', 'skills.git', 'objects');
    const saved = mkdtempSync(path.join(tmpdir(), 'skillpin-objects-'));
    execFileSync('cp', ['-a', objects, saved]);
    for (const entry of readdirSync(objects)) rmSync(path.join(objects, entry), { recursive: true });
    mkdirSync(path.join(objects, 'pack'));
    const run2 = workerFor(config);
    await run2.worker.start();
    expect([current(run2.catalog), retained(run2.catalog)]).toEqual([b, [a]]);
    expect(run2.catalog.namespace('skills', b)!.skills).toEqual(indexed);
    // Once the remote is gone for good, the sync start() began fails: reported, and the restored commits keep serving.
    await proxy.close();
    await git.close();
    expect(await run2.worker.trigger('skills', 'test')).toMatchObject({ ok: false, serving: b });
    expect(run2.catalog.state.failures.map((f) => f.id)).toEqual(['skills']);
    await run2.worker.stop();

    // A half-written index file is detected and rebuilt from git.
    rmSync(objects, { recursive: true });
    execFileSync('cp', ['-a', path.join(saved, 'objects'), path.dirname(objects)]);
    writeFileSync(
      path.join(indexDir(config.dataDir, 'skills'), `${b}.json`),
      '{"options":{"paths":[],"strictNames":false},"index":{"version":1,"commit":"',
    );
    const run3 = workerFor(config);
    await run3.worker.start();
    expect(run3.catalog.namespace('skills', b)!.skills).toEqual(indexed);
    expect(existsSync(path.join(indexDir(config.dataDir, 'skills'), `${b}.json`))).toBe(true);
    await run3.worker.stop();
  });
});
