import { copyFileSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCatalog } from '../../src/catalog/index.ts';
import { type Config, loadConfig } from '../../src/config/index.ts';
import { digestOf } from '../../src/index/index.ts';
import { type Logger, silentLogger } from '../../src/shared/log.ts';
import type { SyncOutcome } from '../../src/sync/follower.ts';
import { createSyncWorker } from '../../src/sync/worker.ts';
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
});
