import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createCatalog } from '../../src/catalog/index.ts';
import { loadConfig } from '../../src/config/index.ts';
import type { WriteFs } from '../../src/shared/fs.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import { openStateFile } from '../../src/sync/dataDir/state.ts';
import { createSyncWorker } from '../../src/sync/worker.ts';
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
    const outcomes = await worker.syncAll('start');
    expect(outcomes.map((o) => [o.id, o.ok, o.ok && o.commit])).toEqual(ids.map((id) => [id, true, c2]));
    expect(written.length).toBe(2);
    const saved = await openStateFile(config.dataDir).read();
    expect(Object.keys(saved.state.sources).sort()).toEqual([...ids].sort());
    expect(Object.values(saved.state.sources).map((s) => s.current)).toEqual(ids.map(() => c2));
    await worker.stop();
  });
});
