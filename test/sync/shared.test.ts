import { cpSync, existsSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createCatalog, type Catalog } from '../../src/catalog/index.ts';
import { loadConfig, type Config } from '../../src/config/index.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import { joinDataDir } from '../../src/sync/dataDir/membership.ts';
import { createSyncWorker } from '../../src/sync/worker.ts';
import { manualClock } from '../helpers/clock.ts';
import { fixture } from '../helpers/fixtures.ts';
import { git } from '../helpers/git.ts';
import { makeRepo } from '../helpers/repo.ts';
import { writeConfig } from '../helpers/server.ts';
import { tempDir } from '../helpers/temp.ts';
import { until } from '../helpers/until.ts';

const skillMd = (text: string) => `---\nname: alpha\ndescription: ${text}\n---\n${text}\n`;
const current = (catalog: Catalog) => catalog.state.sources[0]?.current.commit;
const indexed = (config: Config, commit: string) =>
  existsSync(path.join(config.dataDir, 'index', 'skills', `${commit}.json`));

/** Two workers on one dataDir, as two processes run them: the first holds the lease, the second follows. */
function twoWorkers(config: Config) {
  const make = () => {
    const catalog = createCatalog();
    const worker = createSyncWorker({ config, catalog, logger: silentLogger(), clock: manualClock() });
    return { catalog, worker };
  };
  return [make(), make()] as const;
}

describe('two workers on one dataDir', () => {
  it("the follower serves what the holder publishes, and a commit another live process serves outlives the holder's retention", async () => {
    const repo = makeRepo({ 'alpha/SKILL.md': skillMd('one') });
    const commit = (text: string) => {
      writeFileSync(path.join(repo.dir, 'alpha', 'SKILL.md'), skillMd(text));
      git(['-C', repo.dir, 'commit', '--quiet', '-am', text]);
      return git(['-C', repo.dir, 'rev-parse', 'HEAD']);
    };
    const config = loadConfig(
      writeConfig({ sources: [{ id: 'skills', path: repo.dir, ref: 'main', keep: 0 }] }),
    );
    const [holder, follower] = twoWorkers(config);
    await holder.worker.restore();
    await follower.worker.restore();
    expect(await holder.worker.syncAll('start')).toEqual([
      { id: 'skills', ok: true, commit: repo.commit, changed: true },
    ]);
    await until('the follower to serve the first commit', () => current(follower.catalog) === repo.commit);
    // The follower's own sync reads what was published: no sync of its own, the same commit.
    expect(await follower.worker.syncAll('poll')).toEqual([
      { id: 'skills', ok: true, commit: repo.commit, changed: false },
    ]);

    // A third process that has not moved on yet (the follower moves on as soon as it hears of a publication, so
    // it cannot stand for one): its process file says it serves the first commit.
    const slow = joinDataDir(config, { command: 'serve', transport: 'stdio' }, silentLogger());
    try {
      slow.serving({ skills: [repo.commit] });
      const two = commit('two');
      await holder.worker.syncAll('poll');
      // keep: 0 dropped the first commit from the holder, but a live process serves it: its index file stays.
      expect([current(holder.catalog), indexed(config, repo.commit)]).toEqual([two, true]);
      await until('the follower to serve the second commit', () => current(follower.catalog) === two);
      slow.serving({ skills: [two] });
      const three = commit('three');
      await holder.worker.syncAll('poll');
      // Nobody serves the first commit any more: forgotten now, and the second once the others move on.
      expect([indexed(config, repo.commit), current(holder.catalog)]).toEqual([false, three]);
      await until('the follower to serve the third commit', () => current(follower.catalog) === three);
    } finally {
      slow.leave();
      await follower.worker.stop();
      await holder.worker.stop();
    }
  });

  it("a refs: source's refs are synced by the holder of its one lease; the follower serves what it published", async () => {
    const repo = path.join(tempDir('skillpin-refs-lease-'), 'policies.git');
    cpSync(fixture('versions').gitdir, repo, { recursive: true });
    const config = loadConfig(writeConfig({ sources: [{ id: 'policies', path: repo, refs: ['v*'] }] }));
    const [holder, follower] = twoWorkers(config);
    const served = (catalog: Catalog) => catalog.listed().map((ns) => `${ns.source}@${ns.commit}`);
    try {
      await holder.worker.restore();
      await follower.worker.restore();
      await holder.worker.syncAll('start');
      const refs = served(holder.catalog);
      expect(refs.map((r) => r.split('@')[0])).toEqual([
        'policies.v2.0.0',
        'policies.v1.1.0',
        'policies.v1.0.0',
      ]);
      expect(readdirSync(path.join(config.dataDir, 'leases')).filter((f) => f.endsWith('.json'))).toEqual([
        'policies.json',
      ]);
      await until('the follower to serve the refs', () => served(follower.catalog).join() === refs.join());
      // The follower's poll serves the holder's publication: it lists nothing and takes no lease.
      expect(await follower.worker.syncAll('poll')).toEqual([
        { id: 'policies', ok: true, commit: refs[0]!.split('@')[1], changed: false },
      ]);
      expect(served(follower.catalog)).toEqual(refs);
      expect(readdirSync(path.join(config.dataDir, 'leases')).filter((f) => f.endsWith('.json'))).toEqual([
        'policies.json',
      ]);
    } finally {
      await follower.worker.stop();
      await holder.worker.stop();
    }
  });
});
