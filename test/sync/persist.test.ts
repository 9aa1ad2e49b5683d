import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createCatalog } from '../../src/catalog/index.ts';
import { loadConfig } from '../../src/config/index.ts';
import type { WriteFs } from '../../src/shared/fs.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import { openStateFile } from '../../src/sync/dataDir/state.ts';
import { createSyncWorker, START_SYNC } from '../../src/sync/worker.ts';
import { fixture } from '../helpers/fixtures.ts';
import { writeConfig } from '../helpers/server.ts';

const catalog = fixture('catalog');
const c2 = catalog.commits['c2']!;
const SOURCES = 12;

describe('state.json at a start of many sources', () => {
  it('is written once for the first sync to land and once for all that landed while it was written', async () => {
    const ids = Array.from({ length: SOURCES }, (_, i) => `s${i}`);
    const config = loadConfig(
      writeConfig({
        sources: ids.map((id) => ({ id, path: catalog.gitdir, commit: c2, paths: ['skills'] })),
      }),
    );
    // The first write of state.json holds until every source is served: the others land while it is written.
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const written: string[] = [];
    const fs: WriteFs = {
      ...fsp,
      rename: (async (from: string, to: string) => {
        if (path.basename(to) === 'state.json') {
          written.push(to);
          if (written.length === 1) await released;
        }
        return fsp.rename(from, to);
      }) as WriteFs['rename'],
    };
    const served = createCatalog();
    served.onChange((_, next) => {
      if (next.sources.filter((s) => s.current !== undefined).length === SOURCES) release();
    });
    const worker = createSyncWorker({ config, catalog: served, logger: silentLogger(), fs });
    await worker.restore();
    const outcomes = await worker.syncAll(START_SYNC);
    expect(outcomes.map((o) => [o.id, o.ok, o.ok && o.commit])).toEqual(ids.map((id) => [id, true, c2]));
    expect(written.length).toBe(2);
    const saved = await openStateFile(config.dataDir).read();
    expect(Object.keys(saved.state.sources).sort()).toEqual([...ids].sort());
    expect(Object.values(saved.state.sources).map((s) => s.current)).toEqual(ids.map(() => c2));
    await worker.stop();
  });

  it('at a restart that finds what dataDir served, swaps the catalog once (the restore) and writes state.json once, with every sync time', async () => {
    const ids = Array.from({ length: SOURCES }, (_, i) => `s${i}`);
    const config = loadConfig(
      writeConfig({
        sources: ids.map((id) => ({ id, path: catalog.gitdir, commit: c2, paths: ['skills'] })),
      }),
    );
    const first = createSyncWorker({ config, catalog: createCatalog(), logger: silentLogger() });
    await first.restore();
    await first.syncAll(START_SYNC);
    await first.stop();
    const before = (await openStateFile(config.dataDir).read()).state.sources;

    const written: string[] = [];
    const fs: WriteFs = {
      ...fsp,
      rename: (async (from: string, to: string) => {
        if (path.basename(to) === 'state.json') written.push(to);
        return fsp.rename(from, to);
      }) as WriteFs['rename'],
    };
    const served = createCatalog();
    let swaps = 0;
    served.onChange(() => swaps++);
    const later = { now: () => Date.parse(before['s0']!.lastSync!) + 60_000, after: () => () => undefined };
    const worker = createSyncWorker({ config, catalog: served, logger: silentLogger(), fs, clock: later });
    await worker.restore();
    expect(swaps).toBe(1);
    const outcomes = await worker.syncAll(START_SYNC);
    expect(outcomes.map((o) => [o.id, o.ok, o.ok && o.changed])).toEqual(ids.map((id) => [id, true, false]));
    expect(swaps).toBe(1);
    expect(written.length).toBe(1);
    const after = (await openStateFile(config.dataDir).read()).state.sources;
    const at = new Date(later.now()).toISOString();
    expect(ids.map((id) => [after[id]!.current, after[id]!.lastSync, after[id]!.lastSuccess])).toEqual(
      ids.map(() => [c2, at, at]),
    );
    await worker.stop();
  });
});
