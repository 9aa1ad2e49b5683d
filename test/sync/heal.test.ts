import {
  copyFileSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCatalog } from '../../src/catalog/index.ts';
import { type Config, loadConfig } from '../../src/config/index.ts';
import { digestOf } from '../../src/index/index.ts';
import type { Logger } from '../../src/shared/log.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import type { SyncOutcome } from '../../src/shared/status.ts';
import type { Namespace } from '../../src/catalog/index.ts';
import { damageOf } from '../../src/sync/damage.ts';
import type { Source } from '../../src/sync/source.ts';
import { syncSource } from '../../src/sync/step.ts';
import { createSyncWorker } from '../../src/sync/worker.ts';
import { BACKENDS } from '../helpers/backends.ts';
import { manualClock } from '../helpers/clock.ts';
import { type GitHttpServer, startGitHttpServer } from '../helpers/gitHttpServer.ts';
import { pushableRepo, skillMd } from '../helpers/pushable.ts';
import { writeConfig } from '../helpers/server.ts';
import { tempDir } from '../helpers/temp.ts';

/** A worker on a manual clock; `next()` resolves with the next settled sync. */
function workerFor(config: Config, logger: Logger = silentLogger()) {
  const catalog = createCatalog();
  const waiting: Array<(outcome: SyncOutcome) => void> = [];
  const worker = createSyncWorker({
    config,
    catalog,
    logger,
    random: () => 0.5,
    clock: manualClock(),
    onSettled: (outcome) => {
      for (const resolve of waiting.splice(0)) resolve(outcome);
    },
  });
  const next = () => new Promise<SyncOutcome>((resolve) => waiting.push(resolve));
  return { catalog, worker, next };
}

/** A logger whose lines the test reads. */
function capturedLogger() {
  const lines: Array<Record<string, unknown>> = [];
  return {
    logger: pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) }),
    lines,
  };
}

const NOTES = 'notes of alpha\n';

describe('a damaged store heals itself', () => {
  let git: GitHttpServer;
  let repo: ReturnType<typeof pushableRepo>;
  let commit: string;
  beforeAll(async () => {
    const root = tempDir('skillpin-heal-');
    repo = pushableRepo(root, 'skills');
    commit = repo.push({ 'alpha/SKILL.md': skillMd('alpha', 'heal'), 'alpha/notes.md': NOTES });
    git = await startGitHttpServer({ root });
  });
  afterAll(async () => git.close());

  /** A dataDir that served `commit`, its store, and the worker that filled it (stopped). */
  async function served() {
    const config = loadConfig(
      writeConfig({
        sync: { retryMin: '1h', retryMax: '1h' },
        sources: [{ id: 'skills', url: git.urlFor('skills.git'), ref: 'main', poll: '1h' }],
      }),
    );
    const first = workerFor(config);
    await first.worker.restore();
    await first.worker.syncAll('start');
    await first.worker.stop();
    const store = path.join(config.dataDir, 'repos', 'skills.git');
    return { config, store, packDir: path.join(store, 'objects', 'pack') };
  }
  const notesOf = (catalog: ReturnType<typeof createCatalog>) => {
    const ns = catalog.namespace('skills', commit)!;
    return { ns, blob: ns.skills[0]!.files.find((file) => file.relPath === 'notes.md')!.blob };
  };
  const removePacks = (packDir: string) => {
    for (const file of readdirSync(packDir)) rmSync(path.join(packDir, file));
  };

  it('a restart over a store without its pack: the first read reports source-store-damaged, and a fetch restores it', async () => {
    const { config, packDir } = await served();
    removePacks(packDir);
    const { catalog, worker, next } = workerFor(config);
    await worker.restore();
    // Restored from the index file alone: listed at once, without looking at the store.
    expect(catalog.listed().map((ns) => ns.commit)).toEqual([commit]);
    const { ns, blob } = notesOf(catalog);
    const repaired = next();
    await expect(ns.readBlob(blob)).rejects.toMatchObject({ code: 'source-incomplete' });
    const damaged = {
      id: 'skills',
      reason: 'source-store-damaged',
      detail: `objects of commit ${commit} are missing from the store or unreadable; fetching them again`,
    };
    expect(catalog.state.failures).toEqual([damaged]);
    expect(worker.status().failures).toEqual([damaged]);
    expect(await repaired).toEqual({ id: 'skills', ok: true, commit, changed: false, repaired: [commit] });
    expect(catalog.state.failures).toEqual([]);
    expect(worker.status().failures).toEqual([]);
    const healed = notesOf(catalog);
    expect(healed.ns).not.toBe(ns);
    expect(Buffer.from(await healed.ns.readBlob(healed.blob)).toString()).toBe(NOTES);
    expect(readdirSync(packDir).filter((file) => file.endsWith('.pack')).length).toBe(1);
    await worker.stop();
  });

  it('a sync of an unchanged commit finds its objects gone and fetches them again, never "unchanged"', async () => {
    const { config, packDir } = await served();
    const { catalog, worker } = workerFor(config);
    await worker.restore();
    expect(await worker.syncAll('start')).toEqual([{ id: 'skills', ok: true, commit, changed: false }]);
    removePacks(packDir);
    expect(await worker.trigger('skills', 'webhook')).toEqual({
      id: 'skills',
      ok: true,
      commit,
      changed: false,
      repaired: [commit],
    });
    expect(readdirSync(packDir).filter((file) => file.endsWith('.pack')).length).toBe(1);
    const { ns, blob } = notesOf(catalog);
    expect(Buffer.from(await ns.readBlob(blob)).toString()).toBe(NOTES);
    await worker.stop();
  });

  it('an index file edited into a wrong digest: the read refuses the bytes, and the index is rebuilt', async () => {
    const { config } = await served();
    const file = path.join(config.dataDir, 'index', 'skills', `${commit}.json`);
    const stored = JSON.parse(readFileSync(file, 'utf8')) as {
      index: { skills: Array<{ files: Array<{ relPath: string; digest: string }> }> };
    };
    const entry = stored.index.skills[0]!.files.find((f) => f.relPath === 'notes.md')!;
    expect(entry.digest).toBe(digestOf(Buffer.from(NOTES)));
    entry.digest = `sha256:${'0'.repeat(64)}`;
    writeFileSync(file, JSON.stringify(stored));
    const { catalog, worker, next } = workerFor(config);
    await worker.restore();
    const { ns, blob } = notesOf(catalog);
    const repaired = next();
    await expect(ns.readBlob(blob)).rejects.toMatchObject({ code: 'source-store-damaged' });
    expect(catalog.state.failures).toEqual([
      {
        id: 'skills',
        reason: 'source-store-damaged',
        detail: `the index file of commit ${commit} does not match the store; rebuilding it`,
      },
    ]);
    expect(await repaired).toEqual({ id: 'skills', ok: true, commit, changed: false, repaired: [commit] });
    expect(readFileSync(file, 'utf8')).toContain(digestOf(Buffer.from(NOTES)));
    const healed = notesOf(catalog);
    expect(healed.ns.skills[0]!.files.find((f) => f.relPath === 'notes.md')!.digest).toBe(
      digestOf(Buffer.from(NOTES)),
    );
    expect(Buffer.from(await healed.ns.readBlob(healed.blob)).toString()).toBe(NOTES);
    expect(catalog.state.failures).toEqual([]);
    await worker.stop();
  });

  it('what an interrupted transfer left in the store is removed at the next start, and logged', async () => {
    const { config, store, packDir } = await served();
    const whole = readdirSync(packDir).sort();
    const pack = whole.find((file) => file.endsWith('.pack'))!;
    // As kill -9 leaves them: git's temporary pack and index, a pack written without its index, a held lock.
    const orphan = `pack-${'c'.repeat(40)}.pack`;
    copyFileSync(path.join(packDir, pack), path.join(packDir, orphan));
    writeFileSync(path.join(packDir, 'tmp_pack_k9x1'), 'PACK');
    writeFileSync(path.join(packDir, 'tmp_idx_k9x1'), '');
    writeFileSync(path.join(store, 'shallow.lock'), '');
    const { logger, lines } = capturedLogger();
    const { catalog, worker } = workerFor(config, logger);
    await worker.restore();
    expect(readdirSync(packDir).sort()).toEqual(whole);
    const swept = lines.find(
      (line) => line['msg'] === 'removed what an interrupted transfer left in the store',
    );
    expect(swept?.['removed']).toEqual(
      [
        `objects/pack/${orphan}`,
        'objects/pack/tmp_idx_k9x1',
        'objects/pack/tmp_pack_k9x1',
        'shallow.lock',
      ].sort(),
    );
    expect(await worker.syncAll('start')).toEqual([{ id: 'skills', ok: true, commit, changed: false }]);
    const { ns, blob } = notesOf(catalog);
    expect(Buffer.from(await ns.readBlob(blob)).toString()).toBe(NOTES);
    await worker.stop();
  });

  /** Cuts the store's one pack index to half its size, as a crash or a full disk might leave it. */
  const truncateIndex = (packDir: string) => {
    const idx = path.join(packDir, readdirSync(packDir).find((file) => file.endsWith('.idx'))!);
    truncateSync(idx, Math.floor(statSync(idx).size / 2));
  };
  const readNotes = async (catalog: ReturnType<typeof createCatalog>) => {
    const { ns, blob } = notesOf(catalog);
    return Buffer.from(await ns.readBlob(blob)).toString();
  };

  it('a pack index truncated while serving: a read reports it, the repair restarts the readers, and reads are good again', async () => {
    const { config, packDir } = await served();
    const { catalog, worker, next } = workerFor(config);
    await worker.restore();
    await worker.syncAll('start');
    // Read once: the store's reader holds the pack open, as in a server that has served a while.
    expect(await readNotes(catalog)).toBe(NOTES);
    const started = performance.now();
    truncateIndex(packDir);
    // The reader may still hold the index read whole (isomorphic): then the next sync's check finds it.
    const outcome = next();
    const read = await readNotes(catalog).catch((error: { code: string }) => error.code);
    // isomorphic holds the index it read whole: reads go on, and the next sync's check finds the damage.
    const holdsIndex = config.git.backend === 'isomorphic';
    expect(read).toBe(holdsIndex ? NOTES : 'source-incomplete');
    if (holdsIndex) void worker.trigger('skills', 'webhook');
    expect(await outcome).toEqual({ id: 'skills', ok: true, commit, changed: false, repaired: [commit] });
    expect(await readNotes(catalog)).toBe(NOTES);
    expect([catalog.state.failures, worker.status().failures]).toEqual([[], []]);
    process.stderr.write(
      `truncated .idx healed in ${Math.round(performance.now() - started)} ms (${config.git.backend})\n`,
    );
    await worker.stop();
  });

  it('a pack index truncated before a restart: the repair opens the rewritten index, and reads are good again', async () => {
    const { config, packDir } = await served();
    truncateIndex(packDir);
    const { catalog, worker, next } = workerFor(config);
    await worker.restore();
    const repaired = next();
    await expect(readNotes(catalog)).rejects.toMatchObject({ code: 'source-incomplete' });
    expect(await repaired).toEqual({ id: 'skills', ok: true, commit, changed: false, repaired: [commit] });
    expect(await readNotes(catalog)).toBe(NOTES);
    expect(await worker.syncAll('poll')).toEqual([{ id: 'skills', ok: true, commit, changed: false }]);
    expect([catalog.state.failures, worker.status().failures]).toEqual([[], []]);
    await worker.stop();
  });
});

/** Whether a pack index is whole: its last 20 bytes are the SHA-1 of the bytes before them (git's trailer). */
function wholeIndex(file: string): boolean {
  const bytes = readFileSync(file);
  if (bytes.length < 20) return false;
  const sum = createHash('sha1').update(bytes.subarray(0, -20)).digest();
  return sum.equals(bytes.subarray(-20));
}

describe.each(BACKENDS)('a healed pack index ($name backend)', ({ name }) => {
  let git: GitHttpServer;
  let repo: ReturnType<typeof pushableRepo>;
  beforeAll(async () => {
    const root = tempDir('skillpin-heal-idx-');
    repo = pushableRepo(root, 'skills');
    repo.push({ 'alpha/SKILL.md': skillMd('alpha', 'heal'), 'alpha/notes.md': NOTES });
    git = await startGitHttpServer({ root });
  });
  afterAll(async () => git.close());

  it('leaves no truncated .idx beside the pack the repair fetched: every index of the store is whole', async () => {
    const config = loadConfig(
      writeConfig({
        git: { backend: name },
        sync: { retryMin: '1h', retryMax: '1h' },
        sources: [{ id: 'skills', url: git.urlFor('skills.git'), ref: 'main', poll: '1h', keep: 0 }],
      }),
    );
    const packDir = path.join(config.dataDir, 'repos', 'skills.git', 'objects', 'pack');
    const indexes = () => readdirSync(packDir).filter((file) => file.endsWith('.idx'));
    const first = workerFor(config);
    await first.worker.restore();
    await first.worker.syncAll('start');
    // The first pack holds alpha's notes; the second only what the next commit adds.
    const [older] = indexes();
    const commit = repo.push({ 'beta/SKILL.md': skillMd('beta', 'second') });
    await first.worker.syncAll('poll');
    await first.worker.stop();
    expect(indexes().length).toBe(2);
    truncateSync(path.join(packDir, older!), Math.floor(statSync(path.join(packDir, older!)).size / 2));
    const { catalog, worker, next } = workerFor(config);
    await worker.restore();
    const repaired = next();
    const ns = catalog.namespace('skills', commit)!;
    const blob = ns.skills.find((s) => s.name === 'alpha')!.files.find((f) => f.relPath === 'notes.md')!.blob;
    await expect(ns.readBlob(blob)).rejects.toMatchObject({ code: 'source-incomplete' });
    expect(await repaired).toEqual({ id: 'skills', ok: true, commit, changed: false, repaired: [commit] });
    expect(Buffer.from(await ns.readBlob(blob)).toString()).toBe(NOTES);
    expect(indexes()).not.toContain(older);
    expect(indexes().filter((file) => !wholeIndex(path.join(packDir, file)))).toEqual([]);
    await worker.stop();
  });
});

describe('a repair that leaves reads failing', () => {
  const commit = 'c'.repeat(40);
  const damage = damageOf(commit, 'objects', 'blob b: missing');
  /** A source whose repair "succeeds" while its reader still cannot find the objects (a stale reader). */
  const staleSource = (): Source =>
    ({
      id: 'skills',
      origin: { repository: 'https://example.invalid/skills.git' },
      resolve: async () => ({ commit }),
      check: async () => damage,
      repair: async () => ({ source: 'skills', commit }) as Namespace,
      readable: async () => damageOf(commit, 'objects', '1 object(s) unreadable, such as b'),
    }) as unknown as Source;

  it('is reported as source-store-damaged, not as repaired, and the commit keeps serving', async () => {
    const held = { source: 'skills', commit } as Namespace;
    const { logger, lines } = capturedLogger();
    const step = await syncSource(
      staleSource(),
      { tried: true, served: { id: 'skills', current: held, retained: [] } },
      { keep: 1, why: 'store damaged', at: () => '2026-01-01T00:00:00.000Z', logger, damaged: [damage] },
    );
    const detail = `the repair of commit ${commit} left its objects unreadable`;
    expect(step.outcome).toEqual({
      id: 'skills',
      ok: false,
      reason: 'source-store-damaged',
      detail,
      serving: commit,
      // What the repair's reads said, for the operator's stderr.
      cause: '1 object(s) unreadable, such as b',
    });
    expect(step.repaired).toEqual([]);
    expect(step.record.served?.current).toBe(held);
    expect(lines.map((line) => line['msg'])).toEqual([detail]);
  });

  it('cut short by a stopping worker (its git ended), fails the same but logs nothing: no store is to blame', async () => {
    const held = { source: 'skills', commit } as Namespace;
    const { logger, lines } = capturedLogger();
    const step = await syncSource(
      staleSource(),
      { tried: true, served: { id: 'skills', current: held, retained: [] } },
      {
        keep: 1,
        why: 'start',
        at: () => '2026-01-01T00:00:00.000Z',
        logger,
        damaged: [damage],
        stopping: () => true,
      },
    );
    expect([step.outcome.ok, step.outcome.ok === false && step.outcome.reason]).toEqual([
      false,
      'source-store-damaged',
    ]);
    expect(lines).toEqual([]);
  });
});
