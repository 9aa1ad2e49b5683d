import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, promises as fsp, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { tempDir } from '../helpers/temp.ts';
import { createCatalog, type Catalog, type Namespace } from '../../src/catalog/index.ts';
import { loadConfig, type Config } from '../../src/config/index.ts';
import { indexStore } from '../../src/index/index.ts';
import type { WriteFs } from '../../src/shared/fs.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import type { SyncOutcome } from '../../src/shared/status.ts';
import { openStateFile } from '../../src/sync/dataDir/state.ts';
import { createSyncWorker, type SyncWorkerOptions } from '../../src/sync/worker.ts';
import { manualClock } from '../helpers/clock.ts';
import { startFaultProxy, type Fault } from '../helpers/faultProxy.ts';
import { git as runGit } from '../helpers/git.ts';
import { startGitHttpServer, type GitHttpServer } from '../helpers/gitHttpServer.ts';
import { pushableRepo, skillMd } from '../helpers/pushable.ts';
import { makeRepo } from '../helpers/repo.ts';
import { writeConfig } from '../helpers/server.ts';

/** What a namespace serves and reports, without its reader: equal across a restart. */
const servedBy = (ns: Namespace) => ({ commitTime: ns.commitTime, skills: ns.skills, problems: ns.problems });

const current = (catalog: Catalog, id = 'skills') =>
  catalog.state.sources.find((s) => s.id === id)?.current.commit;
const retained = (catalog: Catalog, id = 'skills') =>
  catalog.state.sources.find((s) => s.id === id)?.retained.map((ns) => ns.commit);
const indexFiles = (config: Config, id = 'skills') =>
  readdirSync(path.join(config.dataDir, 'index', id)).sort();
const pins = (config: Config, id = 'skills') =>
  readdirSync(path.join(config.dataDir, 'repos', `${id}.git`, 'refs', 'skillpin', 'pins')).sort();
const savedState = async (config: Config) => (await openStateFile(config.dataDir).read()).state;
const diskFull = () => Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
/** Node's fs, except that while `full()` no temp file can be created: state.json cannot be written. */
const fillable = (full: () => boolean): WriteFs => ({
  ...fsp,
  open: ((file: string, flags: string) =>
    full() && file.endsWith('.tmp') ? Promise.reject(diskFull()) : fsp.open(file, flags)) as WriteFs['open'],
});

/** A worker on a manual clock; `next(id)` resolves with the next settled sync of that source. */
function workerFor(config: Config, extra: Partial<SyncWorkerOptions> = {}) {
  const catalog = createCatalog();
  const clock = manualClock();
  const waiting: Array<{ id: string; resolve: (outcome: SyncOutcome) => void }> = [];
  const worker = createSyncWorker({
    config,
    catalog,
    logger: silentLogger(),
    random: () => 0.5,
    clock,
    onSettled: (outcome) => {
      for (const w of waiting.splice(0)) {
        if (w.id === outcome.id) w.resolve(outcome);
        else waiting.push(w);
      }
    },
    ...extra,
  });
  const next = (id: string) => new Promise<SyncOutcome>((resolve) => waiting.push({ id, resolve }));
  const start = async () => {
    await worker.restore();
    return worker.syncAll('start');
  };
  return { catalog, worker, clock, next, start };
}

/** A logger whose lines the test reads. */
function capturedLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  return { logger, lines };
}

describe('the sync worker against a remote that fails on cue', () => {
  let root: string;
  let git: GitHttpServer;
  let proxy: Awaited<ReturnType<typeof startFaultProxy>>;
  let repo: ReturnType<typeof pushableRepo>;
  let run: ReturnType<typeof workerFor>;
  let config: Config;
  let first: string;

  beforeAll(async () => {
    root = tempDir('skillpin-faults-');
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
    run = workerFor(config);
    await run.start();
  });
  afterAll(async () => {
    await run.worker.stop();
    await proxy.close();
    await git.close();
  });

  it('serves the branch tip at start, and polls an hour later', () => {
    expect([current(run.catalog), run.clock.pending()]).toEqual([first, [3_600_000]]);
  });

  // One fault of each phase (the ref listing, the transfer, sync.timeout); the reason each fault gets from each
  // backend is test/git/contract.test.ts's.
  const faults: Array<[string, Fault, string]> = [
    ['HTTP 503', { kind: 'status', status: 503 }, 'source-http-error'],
    ['a remote that stops answering', { kind: 'hang' }, 'source-timeout'],
    ['a truncated pack', { kind: 'truncate-pack', bytes: 200 }, 'source-pack-invalid'],
  ];
  let version = 1;
  it.each(faults)(
    'on %s: reports %s, keeps the last good commit serving, retries with backoff and recovers',
    async (_what, fault, reason) => {
      const { catalog, worker, clock, next } = run;
      const before = current(catalog)!;
      const pushed = repo.push({ 'alpha/SKILL.md': skillMd('alpha', `version ${++version}`) });
      proxy.setFault(fault);
      expect(await worker.trigger('skills', 'test')).toMatchObject({ ok: false, reason, serving: before });
      expect(current(catalog)).toBe(before);
      expect(catalog.state.failures).toEqual([expect.objectContaining({ id: 'skills', reason })]);
      expect((await savedState(config)).sources['skills']?.lastError?.reason).toBe(reason);
      // The first retry is due after retryMin (50 ms, jitter 0.5 → ×1); a second failure doubles it.
      expect(clock.pending()).toEqual([50]);
      let retried = next('skills');
      clock.advance(50);
      expect(await retried).toMatchObject({ ok: false, reason });
      expect(clock.pending()).toEqual([100]);
      proxy.setFault({ kind: 'pass' });
      retried = next('skills');
      clock.advance(100);
      expect(await retried).toEqual({ id: 'skills', ok: true, commit: pushed, changed: true });
      expect([current(catalog), catalog.state.failures, clock.pending()]).toEqual([pushed, [], [3_600_000]]);
    },
  );

  it('keeps `keep` previous commits serving and forgets older ones (index files and pins removed)', async () => {
    const { catalog, worker } = run;
    const commits = [current(catalog)!];
    for (let i = 0; i < 3; i++) {
      commits.push(repo.push({ 'alpha/SKILL.md': skillMd('alpha', `retention ${i}`) }));
      expect(await worker.trigger('skills', 'test')).toMatchObject({ ok: true, changed: true });
    }
    expect(current(catalog)).toBe(commits[3]);
    expect(retained(catalog)).toEqual([commits[2], commits[1]]);
    expect(catalog.namespace('skills', commits[0]!)).toBeUndefined();
    const kept = [commits[3]!, commits[2]!, commits[1]!].sort();
    expect(indexFiles(config)).toEqual(kept.map((c) => `${c}.json`));
    expect(pins(config)).toEqual(kept);
    expect((await savedState(config)).sources['skills']).toMatchObject({
      current: commits[3],
      retained: [commits[2], commits[1]],
    });
  });

  it('fetches only the objects the store lacks after a one-file change', async () => {
    const { worker } = run;
    const packDir = path.join(config.dataDir, 'repos', 'skills.git', 'objects', 'pack');
    const packs = () => readdirSync(packDir).filter((f) => f.endsWith('.pack'));
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
    const bytes = (pack: string) =>
      Number(execFileSync('du', ['-b', path.join(packDir, pack)], { encoding: 'utf8' }).split('\t')[0]);
    // The big (incompressible, 266 KB) blob is not sent again: the incremental pack is a few hundred bytes.
    expect(bytes(newest[0]!)).toBeLessThan(2_000);
    expect(bytes([...afterBig].find((p) => !before.has(p))!)).toBeGreaterThan(200_000);
  });

  it('follows a branch that was force-pushed to a new history', async () => {
    const rewritten = repo.forcePushOrphan({ 'beta/SKILL.md': skillMd('beta', 'new history') });
    expect(await run.worker.trigger('skills', 'test')).toMatchObject({ ok: true, commit: rewritten });
    expect(run.catalog.listed()[0]!.skills.map((s) => s.name)).toEqual(['beta']);
  });

  it('merges triggers for a source that is already syncing into one follow-up sync', async () => {
    const pushed = repo.push({ 'alpha/SKILL.md': skillMd('alpha', 'merged') });
    const refsBefore = git.requests.filter((r) => r.path.endsWith('/info/refs')).length;
    const outcomes = await Promise.all(
      Array.from({ length: 6 }, () => run.worker.trigger('skills', 'burst')!),
    );
    expect(new Set(outcomes.map((o) => o.ok && o.commit))).toEqual(new Set([pushed]));
    const refRequests = git.requests.filter((r) => r.path.endsWith('/info/refs')).length - refsBefore;
    // One sync resolves the ref once and fetches (two info/refs requests); the merged follow-up resolves once more.
    expect(refRequests).toBe(3);
  });

  it('reports a ref that no longer exists and keeps serving', async () => {
    const before = current(run.catalog);
    repo.deleteBranch('main');
    expect(await run.worker.trigger('skills', 'test')).toMatchObject({
      ok: false,
      reason: 'source-ref-not-found',
      serving: before,
    });
    expect(current(run.catalog)).toBe(before);
    repo.push({ 'beta/SKILL.md': skillMd('beta', 'back') });
  });
});

describe('other faults', () => {
  it('reports an unreachable remote and a pinned commit that is gone after a force-push', async () => {
    const root = tempDir('skillpin-gone-');
    const repo = pushableRepo(root, 'skills');
    const gone = repo.push({ 'alpha/SKILL.md': skillMd('alpha', 'soon gone') });
    repo.forcePushOrphan({ 'beta/SKILL.md': skillMd('beta', 'replaces it') });
    const git = await startGitHttpServer({ root, config: { 'uploadpack.allowAnySHA1InWant': 'true' } });
    const config = loadConfig(
      writeConfig({
        // No short sync.timeout: on a busy machine the healthy source would time out too.
        sync: { retryMin: '1h', retryMax: '1h' },
        sources: [
          { id: 'closed', url: 'http://127.0.0.1:9/none.git', ref: 'main' },
          { id: 'pinned', url: git.urlFor('skills.git'), commit: gone },
          { id: 'healthy', url: git.urlFor('skills.git'), ref: 'main' },
        ],
      }),
    );
    const { catalog, worker, start } = workerFor(config);
    await start();
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
    const root = tempDir('skillpin-disk-');
    const repo = pushableRepo(root, 'skills');
    const good = repo.push({ 'alpha/SKILL.md': skillMd('alpha', 'fits') });
    const git = await startGitHttpServer({ root });
    let full = false;
    const config = loadConfig(
      writeConfig({
        sync: { retryMin: '1m', retryMax: '1h' },
        sources: [{ id: 'skills', url: git.urlFor('skills.git'), ref: 'main' }],
      }),
    );
    // The disk fills up while the new commit's index file is written.
    const { catalog, worker, clock, start } = workerFor(config, {
      indexStore: (dir) => {
        const store = indexStore(dir);
        return { ...store, save: (...args) => (full ? Promise.reject(diskFull()) : store.save(...args)) };
      },
    });
    await start();
    expect(current(catalog)).toBe(good);
    full = true;
    const next = repo.push({ 'alpha/SKILL.md': skillMd('alpha', 'does not fit') });
    expect(await worker.trigger('skills', 'test')).toEqual({
      id: 'skills',
      ok: false,
      reason: 'source-disk-full',
      detail: 'no space left on the device holding dataDir',
      serving: good,
    });
    expect([current(catalog), clock.pending(), indexFiles(config)]).toEqual([
      good,
      [60_000],
      [`${good}.json`],
    ]);
    full = false;
    expect(await worker.trigger('skills', 'space again')).toMatchObject({ ok: true, commit: next });
    await worker.stop();
    await git.close();
  });
});

describe('state.json', () => {
  let root: string;
  let git: GitHttpServer;
  let repo: ReturnType<typeof pushableRepo>;
  beforeAll(async () => {
    root = tempDir('skillpin-statefile-');
    repo = pushableRepo(root, 'skills');
    git = await startGitHttpServer({ root });
  });
  afterAll(async () => git.close());

  it('a commit that falls out of retention is forgotten only once state.json no longer names it', async () => {
    const a = repo.push({ 'alpha/SKILL.md': skillMd('alpha', 'a') });
    const config = loadConfig(
      writeConfig({ sources: [{ id: 'skills', url: git.urlFor('skills.git'), ref: 'main', keep: 0 }] }),
    );
    let full = false;
    const { catalog, worker, start } = workerFor(config, { fs: fillable(() => full) });
    await start();
    full = true;
    const b = repo.push({ 'alpha/SKILL.md': skillMd('alpha', 'b') });
    expect(await worker.trigger('skills', 'test')).toMatchObject({ ok: true, commit: b });
    // Served at once, but state.json could not be written: it still names `a`, so `a` stays on disk.
    expect([current(catalog), retained(catalog)]).toEqual([b, []]);
    expect((await savedState(config)).sources['skills']?.current).toBe(a);
    expect([indexFiles(config), pins(config)]).toEqual([
      [a, b].sort().map((c) => `${c}.json`),
      [a, b].sort(),
    ]);
    full = false;
    expect(await worker.trigger('skills', 'test')).toMatchObject({ ok: true, changed: false });
    expect((await savedState(config)).sources['skills']?.current).toBe(b);
    expect([indexFiles(config), pins(config)]).toEqual([[`${b}.json`], [b]]);
    await worker.stop();
  });

  it('a dropped commit that is served again before the state is written is kept', async () => {
    const a = repo.push({ 'alpha/SKILL.md': skillMd('alpha', 'again a') });
    const config = loadConfig(
      writeConfig({ sources: [{ id: 'skills', url: git.urlFor('skills.git'), ref: 'main', keep: 0 }] }),
    );
    let full = false;
    const { catalog, worker, start } = workerFor(config, { fs: fillable(() => full) });
    await start();
    full = true;
    repo.push({ 'alpha/SKILL.md': skillMd('alpha', 'again b') });
    expect(await worker.trigger('skills', 'test')).toMatchObject({ ok: true, changed: true });
    execFileSync('git', ['-C', repo.bare, 'update-ref', 'refs/heads/main', a]);
    full = false;
    expect(await worker.trigger('skills', 'moved back')).toMatchObject({
      ok: true,
      commit: a,
      changed: true,
    });
    expect(current(catalog)).toBe(a);
    expect([indexFiles(config), pins(config)]).toEqual([[`${a}.json`], [a]]);
    await worker.stop();
  });

  it('when corrupt, is rebuilt from the index files and pins, and the source serves with its remote down', async () => {
    const a = repo.push({ 'alpha/SKILL.md': skillMd('alpha', 'rebuild a') });
    const proxy = await startFaultProxy(git.url);
    const config = loadConfig(
      writeConfig({
        sync: { timeout: '1h' },
        sources: [{ id: 'skills', url: `${proxy.url}/skills.git`, ref: 'main', keep: 1 }],
      }),
    );
    const run1 = workerFor(config);
    await run1.start();
    const b = repo.push({ 'alpha/SKILL.md': skillMd('alpha', 'rebuild b') });
    await run1.worker.trigger('skills', 'test');
    await run1.worker.stop();
    const indexed = servedBy(run1.catalog.namespace('skills', b)!);

    // A torn state.json, b's index file gone (its pin remains), and a remote that never answers.
    writeFileSync(path.join(config.dataDir, 'state.json'), '{"version":1,"sources":{"skills":{"curr');
    rmSync(path.join(config.dataDir, 'index', 'skills', `${b}.json`));
    proxy.setFault({ kind: 'hang' });
    const { logger, lines } = capturedLogger();
    const run2 = workerFor(config, { logger });
    await run2.worker.restore();
    expect([current(run2.catalog), retained(run2.catalog)]).toEqual([b, [a]]);
    expect(servedBy(run2.catalog.namespace('skills', b)!)).toEqual(indexed);
    expect(
      lines
        .filter((l) => l['level'] === 40)
        .map((l) => [l['msg'], l['current'] ?? null, l['retained'] ?? null]),
    ).toEqual([
      ['state.json is corrupt: rebuilding it from the index files and pins in dataDir', null, null],
      ['state.json does not name this source: rebuilt from the index files and pins in dataDir', b, [a]],
    ]);
    // The first sync fails (the remote is gone for good); what was rebuilt keeps serving and is written down.
    const first = run2.worker.syncAll('start');
    await proxy.close();
    expect(await first).toEqual([expect.objectContaining({ ok: false, serving: b })]);
    expect((await savedState(config)).sources['skills']).toMatchObject({ current: b, retained: [a] });
    await run2.worker.stop();
  });
});

describe('status and readiness', () => {
  it('report every source: pending until tried, then what it serves, its last sync and last error', async () => {
    const { dir, commit } = makeRepo({ 'alpha/SKILL.md': skillMd('alpha', 'one') });
    const config = loadConfig(
      writeConfig({
        sources: [
          { id: 'local', path: dir, commit },
          { id: 'closed', url: 'http://127.0.0.1:9/none.git', ref: 'main' },
        ],
      }),
    );
    const { worker, clock } = workerFor(config);
    await worker.restore();
    expect(worker.pending()).toEqual(['local', 'closed']);
    clock.advance(1500);
    const syncing = worker.syncAll('start', (source) => source.id === 'local');
    expect(worker.status().sources.map((s) => [s.id, s.syncing])).toEqual([
      ['local', true],
      ['closed', false],
    ]);
    await syncing;
    expect(worker.pending()).toEqual(['closed']);
    await worker.syncAll('start', (source) => source.id === 'closed');
    expect(worker.pending()).toEqual([]);
    const at = '2024-05-01T00:00:01.500Z';
    // The same sentence under both backends: ours, never git's or Node's words.
    const detail =
      'listing the refs of http://127.0.0.1:9/none.git: the remote could not be reached (connection refused or reset, unknown host, no route)';
    expect(worker.status()).toEqual({
      version: 2,
      sources: [
        {
          id: 'local',
          repository: `local:${dir}`,
          ref: null,
          current: { commit, commitTime: '2024-05-01T00:00:00.000Z', skills: 1, problems: [] },
          retained: [],
          syncing: false,
          lastSync: at,
          lastSuccess: at,
          nextSync: null,
          lastError: null,
        },
        {
          id: 'closed',
          repository: 'http://127.0.0.1:9/none.git',
          ref: 'main',
          current: null,
          retained: [],
          syncing: false,
          lastSync: at,
          lastSuccess: null,
          // retryMin (5 s by default) after the failure; the test fixes the jitter at 1×.
          nextSync: '2024-05-01T00:00:06.500Z',
          lastError: { reason: 'source-unreachable', detail, at },
        },
      ],
      failures: [{ id: 'closed', reason: 'source-unreachable', detail }],
    });
    await worker.stop();
  });
});

describe('a local repository', () => {
  it('is followed in place: commits made by another program are found by the next sync', async () => {
    const { dir, commit } = makeRepo({ 'alpha/SKILL.md': skillMd('alpha', 'one') });
    const config = loadConfig(
      writeConfig({ sources: [{ id: 'local', path: dir, ref: 'main', poll: '1h' }] }),
    );
    const { catalog, worker, start } = workerFor(config);
    await start();
    expect(current(catalog, 'local')).toBe(commit);
    // Read a file so the store's memory of which loose objects exist is filled, then commit more beside it.
    const ns = catalog.listed()[0]!;
    await ns.readBlob(ns.skills[0]!.files[0]!.blob);
    writeFileSync(path.join(dir, 'beta.md'), 'two\n');
    mkdirSync(path.join(dir, 'beta'));
    writeFileSync(path.join(dir, 'beta', 'SKILL.md'), skillMd('beta', 'two'));
    runGit(['-C', dir, 'add', '--all']);
    runGit(['-C', dir, 'commit', '-q', '-m', 'two']);
    const next = runGit(['-C', dir, 'rev-parse', 'HEAD']);
    expect(await worker.trigger('local', 'test')).toMatchObject({ ok: true, commit: next, changed: true });
    expect(catalog.listed()[0]!.skills.map((s) => s.name)).toEqual(['alpha', 'beta']);
    await worker.stop();
  });
});

describe('restarts', () => {
  it('serve the last good catalog at once without the network or the objects, and rebuild a corrupt index', async () => {
    const root = tempDir('skillpin-restart-');
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
    await run1.start();
    const b = repo.push({ 'alpha/SKILL.md': skillMd('alpha', 'b') });
    await run1.worker.trigger('skills', 'test');
    await run1.worker.stop();
    const indexed = servedBy(run1.catalog.namespace('skills', b)!);

    // The remote now never answers (and the timeout is an hour), and the object files are gone: restore()
    // still resolves, serving listing and entries from dataDir alone. Waiting on the network would hang this test.
    proxy.setFault({ kind: 'hang' });
    const objects = path.join(config.dataDir, 'repos', 'skills.git', 'objects');
    const saved = tempDir('skillpin-objects-');
    execFileSync('cp', ['-a', objects, saved]);
    for (const entry of readdirSync(objects)) rmSync(path.join(objects, entry), { recursive: true });
    mkdirSync(path.join(objects, 'pack'));
    const run2 = workerFor(config);
    await run2.worker.restore();
    expect([current(run2.catalog), retained(run2.catalog)]).toEqual([b, [a]]);
    expect(servedBy(run2.catalog.namespace('skills', b)!)).toEqual(indexed);
    // Once the remote is gone for good, the first sync fails: reported, and the restored commits keep serving.
    const first = run2.worker.syncAll('start');
    await proxy.close();
    await git.close();
    expect(await first).toEqual([expect.objectContaining({ ok: false, serving: b })]);
    expect(run2.catalog.state.failures.map((f) => f.id)).toEqual(['skills']);
    await run2.worker.stop();

    // A half-written index file is detected and rebuilt from git.
    rmSync(objects, { recursive: true });
    execFileSync('cp', ['-a', path.join(saved, 'objects'), path.dirname(objects)]);
    writeFileSync(
      path.join(config.dataDir, 'index', 'skills', `${b}.json`),
      '{"options":{"paths":[],"strictNames":false},"index":{"version":1,"commit":"',
    );
    const run3 = workerFor(config);
    await run3.worker.restore();
    expect(servedBy(run3.catalog.namespace('skills', b)!)).toEqual(indexed);
    expect(existsSync(path.join(config.dataDir, 'index', 'skills', `${b}.json`))).toBe(true);
    await run3.worker.stop();
    rmSync(saved, { recursive: true, force: true });
  });
});

describe('reconfigure', () => {
  it('starts added sources, stops removed ones (retained commits too) and restarts changed ones, in one swap', async () => {
    const kept = makeRepo({ 'alpha/SKILL.md': skillMd('alpha', 'one') });
    const gone = makeRepo({ 'gamma/SKILL.md': skillMd('gamma', 'one') });
    const moved = makeRepo({
      'a/delta/SKILL.md': skillMd('delta', 'd'),
      'b/eps/SKILL.md': skillMd('eps', 'e'),
    });
    const added = makeRepo({ 'zeta/SKILL.md': skillMd('zeta', 'z') });
    const file = writeConfig({
      sources: [
        { id: 'kept', path: kept.dir, ref: 'main' },
        { id: 'gone', path: gone.dir, ref: 'main' },
        { id: 'moved', path: moved.dir, ref: 'main' },
      ],
    });
    const { catalog, worker, start, next } = workerFor(loadConfig(file));
    await start();
    // A second commit of `gone`, so that it also has a retained one.
    writeFileSync(path.join(gone.dir, 'gamma', 'more.md'), 'more\n');
    runGit(['-C', gone.dir, 'add', '--all']);
    runGit(['-C', gone.dir, 'commit', '-q', '-m', 'two']);
    await worker.trigger('gone', 'test');
    expect(retained(catalog, 'gone')).toEqual([gone.commit]);
    const keptBefore = catalog.state.sources.find((s) => s.id === 'kept');

    writeFileSync(
      file,
      stringify({
        dataDir: path.join(path.dirname(file), 'data'),
        sources: [
          { id: 'kept', path: kept.dir, ref: 'main' },
          { id: 'moved', path: moved.dir, ref: 'main', paths: ['b'] },
          { id: 'added', path: added.dir, ref: 'main' },
        ],
      }),
    );
    const swaps: string[][] = [];
    catalog.onChange((_, state) => swaps.push(state.sources.map((s) => s.id)));
    const addedSynced = next('added');
    expect(await worker.reconfigure(loadConfig(file))).toEqual({
      added: ['added'],
      removed: ['gone'],
      changed: ['moved'],
    });
    // The swap the reconfigure made: `gone` and its retained commit are no longer served; `moved` serves its
    // commit re-indexed under its new paths, before any sync; `kept` is the very same served source.
    expect(swaps[0]).toEqual(['kept', 'moved']);
    expect(catalog.namespace('gone', gone.commit)).toBeUndefined();
    expect(catalog.state.sources.find((s) => s.id === 'kept')).toBe(keptBefore);
    expect(catalog.namespace('moved', moved.commit)!.skills.map((s) => s.dir)).toEqual(['b/eps']);
    expect(await addedSynced).toMatchObject({ ok: true, commit: added.commit });
    expect(catalog.listed().map((ns) => ns.source)).toEqual(['kept', 'moved', 'added']);
    expect(Object.keys((await savedState(loadConfig(file))).sources).sort()).toEqual([
      'added',
      'kept',
      'moved',
    ]);
    expect(worker.status().sources.map((s) => s.id)).toEqual(['kept', 'moved', 'added']);
    await worker.stop();
  });

  it('drops what a source served when its repository changes', async () => {
    const one = makeRepo({ 'alpha/SKILL.md': skillMd('alpha', 'one') });
    const two = makeRepo({ 'beta/SKILL.md': skillMd('beta', 'two') });
    const file = writeConfig({ sources: [{ id: 's', path: one.dir, ref: 'main' }] });
    const config = loadConfig(file);
    const { catalog, worker, start, next } = workerFor(config);
    await start();
    const synced = next('s');
    const swaps: Array<string | undefined> = [];
    catalog.onChange((_, state) => swaps.push(state.sources[0]?.current.commit));
    await worker.reconfigure({
      ...config,
      sources: [{ ...config.sources[0]!, location: { kind: 'local', path: two.dir } }],
    });
    expect(swaps[0]).toBeUndefined();
    expect(catalog.namespace('s', one.commit)).toBeUndefined();
    expect(await synced).toMatchObject({ ok: true, commit: two.commit });
    expect(current(catalog, 's')).toBe(two.commit);
    // The other repository's index file is forgotten once state.json no longer names its commit.
    expect(indexFiles(config, 's')).toEqual([`${two.commit}.json`]);
    await worker.stop();
  });
});

describe('the log', () => {
  it('logs a problem of severity error at error level, and a warning at warn level', async () => {
    const { dir } = makeRepo({
      'good/SKILL.md': skillMd('good', 'ok'),
      'Bad_Name/SKILL.md': skillMd('Bad_Name', 'bad'),
      'renamed/SKILL.md': skillMd('other-name', 'warned'),
    });
    const { logger, lines } = capturedLogger();
    const config = loadConfig(writeConfig({ sources: [{ id: 'local', path: dir, ref: 'main' }] }));
    const { worker, start } = workerFor(config, { logger });
    await start();
    await worker.stop();
    const problems = lines.filter((line) => line['reason'] !== undefined && line['path'] !== undefined);
    // pino levels: 50 error, 40 warn.
    expect(problems.map((line) => [line['path'], line['reason'], line['level']])).toEqual([
      ['Bad_Name/SKILL.md', 'name-invalid', 50],
      ['renamed/SKILL.md', 'name-mismatch', 40],
    ]);
  });
});

describe('a search index that cannot be saved', () => {
  it('still serves, and says why it was not saved', async () => {
    const { dir } = makeRepo({ 'good/SKILL.md': skillMd('good', 'ok') });
    const { logger, lines } = capturedLogger();
    const config = loadConfig(writeConfig({ sources: [{ id: 'local', path: dir, ref: 'main' }] }));
    const { catalog, worker, start } = workerFor(config, {
      logger,
      indexStore: (dir) => ({ ...indexStore(dir), saveSearch: () => Promise.reject(diskFull()) }),
    });
    await start();
    const data = await catalog.listed()[0]!.searchData!();
    await worker.stop();
    expect(data.postings.skillCount).toBe(1);
    expect(lines.filter((line) => line['level'] === 40).map((line) => [line['source'], line['msg']])).toEqual(
      [
        [
          'local',
          'a search index could not be saved in dataDir (it is built again at the next start): no space left on device, write (ENOSPC)',
        ],
      ],
    );
  });
});

describe('a local source as configured', () => {
  it('is named by the path the config gives, in its failure and its provenance', async () => {
    const config = loadConfig(writeConfig({ sources: [{ id: 'typo', path: './rep', ref: 'HEAD' }] }));
    const { worker, start } = workerFor(config);
    expect(await start()).toEqual([
      {
        id: 'typo',
        ok: false,
        reason: 'source-not-a-repository',
        detail: `./rep does not exist (looked for ${path.resolve(path.dirname(config.file), 'rep')})`,
      },
    ]);
    expect(worker.status().sources[0]!.repository).toBe('local:./rep');
    await worker.stop();
  });
});
