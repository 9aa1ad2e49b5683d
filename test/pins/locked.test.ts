import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Catalog, createCatalog } from '../../src/catalog/index.ts';
import { type Config, loadConfig } from '../../src/config/index.ts';
import { relock } from '../../src/pins/relock.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import { type LockedSource, type Lockfile, lockedConfig } from '../../src/pins/lockfile.ts';
import { createSyncWorker } from '../../src/sync/worker.ts';
import { manualClock } from '../helpers/clock.ts';
import { git } from '../helpers/git.ts';
import { type GitHttpServer, startGitHttpServer } from '../helpers/gitHttpServer.ts';
import { pushableRepo, skillMd } from '../helpers/pushable.ts';
import { writeConfig } from '../helpers/server.ts';
import { tempDir } from '../helpers/temp.ts';

const ZERO_TREE = '0'.repeat(40);
const ZERO_DIGEST = `sha256:${'0'.repeat(64)}`;

function workerFor(config: Config) {
  const catalog = createCatalog();
  const worker = createSyncWorker({
    config,
    catalog,
    logger: silentLogger(),
    random: () => 0.5,
    clock: manualClock(),
  });
  return { catalog, worker };
}

/** The commits each source serves, current first. */
const servedCommits = (catalog: Catalog) =>
  Object.fromEntries(
    catalog.state.sources.map((s) => [s.id, [s.current.commit, ...s.retained.map((ns) => ns.commit)]]),
  );

describe('serving a lockfile checks it against the commits it locks', () => {
  let server: GitHttpServer;
  let root: string;
  let first: string;
  let second: string;
  let config: Config;
  /** The honest lock of both sources, the skills source at `second`. */
  let honest: Lockfile;
  /** The honest entry of the skills source at `first`. */
  let older: LockedSource;

  beforeAll(async () => {
    root = tempDir('skillpin-locked-');
    const repo = pushableRepo(root, 'skills');
    first = repo.push({
      'alpha/SKILL.md': skillMd('alpha', 'version 1'),
      'beta/SKILL.md': skillMd('beta', 'b'),
    });
    second = repo.push({ 'alpha/SKILL.md': skillMd('alpha', 'version 2') });
    pushableRepo(root, 'other').push({ 'gamma/SKILL.md': skillMd('gamma', 'g') });
    server = await startGitHttpServer({ root });
    config = loadConfig(
      writeConfig({
        sync: { retryMin: '1h', retryMax: '1h' },
        sources: [
          { id: 'skills', url: server.urlFor('skills.git'), ref: 'main', poll: '1h', keep: 2 },
          { id: 'other', url: server.urlFor('other.git'), ref: 'main', poll: '1h' },
        ],
      }),
    );
    honest = (await relock(config, () => true, { ignorePrevious: true })).lock;
    const atFirst = { ...config.sources[0]!, target: { kind: 'commit' as const, commit: first } };
    const lockedFirst = await relock({ ...config, sources: [atFirst] }, () => true, { ignorePrevious: true });
    older = { ...lockedFirst.lock.sources[0]!, ref: 'main' };
    expect(honest.sources.map((s) => [s.id, s.skills.length])).toEqual([
      ['skills', 2],
      ['other', 1],
    ]);
  });
  afterAll(async () => server.close());

  const treeOf = (commit: string) =>
    git(['--git-dir', `${root}/skills.git`, 'rev-parse', `${commit}^{tree}`]);
  /** The honest lock with the skills entry edited by `edit`. */
  const edited = (edit: (entry: LockedSource) => LockedSource): Lockfile => ({
    version: 1,
    sources: honest.sources.map((entry) => (entry.id === 'skills' ? edit(structuredClone(entry)) : entry)),
  });
  /** Syncs `dataDir` (a fresh one unless given) under `lock`: the outcomes, and what serves. */
  const syncLocked = async (lock: Lockfile, dataDir = tempDir('skillpin-locked-data-')) => {
    const locked = lockedConfig({ ...config, dataDir }, lock, 'skillpin.lock');
    const { catalog, worker } = workerFor(locked);
    await worker.restore();
    const outcomes = await worker.syncAll('start');
    await worker.stop();
    return { outcomes, served: servedCommits(catalog) };
  };
  const otherServes = (changed = true) => ({
    id: 'other',
    ok: true,
    commit: honest.sources[1]!.commit,
    changed,
  });
  const refused = (detail: string) => ({ id: 'skills', ok: false, reason: 'source-lock-mismatch', detail });

  it('serves an honest lock', async () => {
    const { outcomes } = await syncLocked(honest);
    expect(outcomes).toEqual([{ id: 'skills', ok: true, commit: second, changed: true }, otherServes()]);
  });

  it('refuses an older commit with its tree zeroed and the newer digests kept, naming the tree; the other source serves', async () => {
    const { outcomes, served } = await syncLocked(
      edited((entry) => ({ ...entry, commit: first, tree: ZERO_TREE })),
    );
    expect(outcomes).toEqual([
      refused(
        `commit ${first} does not match its lock entry: tree is ${treeOf(first)} in the commit, ${ZERO_TREE} in the lockfile (and 1 more)`,
      ),
      otherServes(),
    ]);
    expect(served).toEqual({ other: [honest.sources[1]!.commit] });
  });

  it('refuses an older commit under its true tree with the newer digests kept, naming the skill and both digests', async () => {
    const alpha = honest.sources[0]!.skills.find((skill) => skill.path === 'alpha')!;
    const was = older.skills.find((skill) => skill.path === 'alpha')!;
    expect([was.bytes, was.files]).toEqual([alpha.bytes, alpha.files]);
    const { outcomes } = await syncLocked(edited((entry) => ({ ...entry, commit: first, tree: older.tree })));
    expect(outcomes).toEqual([
      refused(
        `commit ${first} does not match its lock entry: skill alpha: digest is ${was.digest} in the commit, ${alpha.digest} in the lockfile`,
      ),
      otherServes(),
    ]);
  });

  it('refuses a zeroed digest, a file count or byte total changed, a skill deleted from the entry, or one added', async () => {
    const at = `commit ${second} does not match its lock entry: `;
    const skill = (entry: LockedSource, path: string) => entry.skills.find((s) => s.path === path)!;
    const alpha = skill(honest.sources[0]!, 'alpha');
    const cases: Array<[(entry: LockedSource) => void, string]> = [
      [
        (e) => void (skill(e, 'alpha').digest = ZERO_DIGEST),
        `skill alpha: digest is ${alpha.digest} in the commit, ${ZERO_DIGEST} in the lockfile`,
      ],
      [(e) => void (skill(e, 'alpha').files = 2), `skill alpha: files is 1 in the commit, 2 in the lockfile`],
      [
        (e) => void (skill(e, 'alpha').bytes += 1),
        `skill alpha: bytes is ${alpha.bytes} in the commit, ${alpha.bytes + 1} in the lockfile`,
      ],
      [
        (e) => void (e.skills = e.skills.filter((s) => s.path !== 'beta')),
        'skill beta is served by the commit, and the lockfile does not list it',
      ],
      [
        (e) => void e.skills.push({ ...alpha, path: 'gone' }),
        'skill gone is listed in the lockfile, and the commit does not serve it',
      ],
    ];
    // One dataDir that served the honest lock: each edit is checked against the index files it holds.
    const dataDir = tempDir('skillpin-locked-data-');
    await syncLocked(honest, dataDir);
    for (const [edit, detail] of cases) {
      const { outcomes } = await syncLocked(
        edited((entry) => {
          edit(entry);
          return entry;
        }),
        dataDir,
      );
      expect(outcomes).toEqual([refused(at + detail), otherServes(false)]);
    }
  });

  it('a lock rolled back to an older commit serves that commit alone: the newer one the dataDir retains is not', async () => {
    const dataDir = tempDir('skillpin-locked-data-');
    // Unlocked, the dataDir served first, then second with first retained.
    for (const commit of [first, second]) {
      const pinned = { ...config.sources[0]!, target: { kind: 'commit' as const, commit } };
      const run = workerFor({ ...config, dataDir, sources: [pinned] });
      await run.worker.restore();
      await run.worker.syncAll('start');
      await run.worker.stop();
      expect(servedCommits(run.catalog)).toEqual({ skills: commit === first ? [first] : [second, first] });
    }
    const rolledBack: Lockfile = { version: 1, sources: [older, honest.sources[1]!] };
    const { catalog, worker } = workerFor(lockedConfig({ ...config, dataDir }, rolledBack, 'skillpin.lock'));
    await worker.restore();
    expect(servedCommits(catalog)).toEqual({ skills: [first] });
    expect(await worker.syncAll('start')).toEqual([
      { id: 'skills', ok: true, commit: first, changed: false },
      otherServes(),
    ]);
    expect(servedCommits(catalog)).toEqual({ skills: [first], other: [honest.sources[1]!.commit] });
    expect(catalog.namespace('skills', second)).toBeUndefined();
    await worker.stop();
  });
});
