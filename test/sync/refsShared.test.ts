import { cpSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Catalog, createCatalog } from '../../src/catalog/index.ts';
import { type Config, loadConfig } from '../../src/config/index.ts';
import { indexStore } from '../../src/index/index.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import { createSyncWorker, type SyncWorker } from '../../src/sync/worker.ts';
import { BACKENDS } from '../helpers/backends.ts';
import { fixture } from '../helpers/fixtures.ts';
import { git } from '../helpers/git.ts';
import { type GitHttpServer, startGitHttpServer } from '../helpers/gitHttpServer.ts';
import { writeConfig } from '../helpers/server.ts';
import { tempDir } from '../helpers/temp.ts';

const fx = () => fixture('versions');
const C = (id: 'c1' | 'c2' | 'c3' | 'c4') => fx().commits[id]!;
const REFS = ['v2.0.1', 'v2.0.0', 'v1.1.1', 'v1.1.0', 'v1.0.1', 'v1.0.0'].map((v) => `policies.${v}`);

// Six tags on three commits (v1.0.x on c1, v1.1.x on c2, v2.0.x on c3): one listing of the remote, each commit
// fetched and indexed once, and a poll that finds nothing new lists once and does nothing else.
describe.each(BACKENDS)('a refs: source whose tags share commits ($name backend)', ({ name }) => {
  let root: string;
  let remote: GitHttpServer;
  let worker: SyncWorker;
  let config: Config;
  const catalog: Catalog = createCatalog();
  const indexed: string[] = [];
  let pendingAsRefsStart: string[] | undefined;
  const requests = (from: number) => {
    const made = remote.requests.slice(from);
    return {
      advertisements: made.filter((r) => r.path.endsWith('/info/refs')).length,
      lsRefs: made.filter((r) => r.lsRefs).length,
      fetches: made.filter((r) => r.fetch).length,
    };
  };

  beforeAll(async () => {
    root = tempDir('skillpin-refs-shared-');
    const bare = path.join(root, 'policies.git');
    cpSync(fx().gitdir, bare, { recursive: true });
    git(['--git-dir', bare, 'update-ref', 'refs/tags/v1.0.1', C('c1')]);
    git(['--git-dir', bare, 'update-ref', 'refs/tags/v1.1.1', C('c2')]);
    git(['--git-dir', bare, 'update-ref', 'refs/tags/v2.0.1', C('c3')]);
    remote = await startGitHttpServer({ root });
    const file = writeConfig({
      git: { backend: name },
      sources: [
        {
          id: 'policies',
          url: remote.urlFor('policies.git'),
          refs: ['refs/tags/v1.*', 'refs/tags/v2.0.*'],
          poll: '1h',
        },
      ],
    });
    config = loadConfig(file);
    worker = createSyncWorker({
      config,
      catalog,
      logger: silentLogger(),
      onProgress: (id, progress) => void (progress.phase === 'indexing' && indexed.push(id)),
      // The first ref's source opens once the listing is recorded, before any ref syncs: readiness then.
      indexStore: (dir) => {
        pendingAsRefsStart ??= dir.endsWith('policies.v2.0.1') ? worker.pending() : undefined;
        return indexStore(dir);
      },
    });
    await worker.restore();
  });
  afterAll(async () => {
    await worker.stop();
    await remote.close();
  });

  it('is not ready while its listed refs have not synced', () => {
    expect(worker.pending()).toEqual(['policies']);
  });

  it('lists the remote once and fetches and indexes each commit once on the first sync', async () => {
    await worker.syncAll('start');
    expect(pendingAsRefsStart).toEqual(REFS);
    expect(worker.pending()).toEqual([]);
    const served = worker.status().sources.map((s) => [s.id, s.current?.commit]);
    expect(served).toEqual([
      ['policies', undefined],
      ...REFS.map((id) => [id, C(id.includes('v2.') ? 'c3' : id.includes('v1.1') ? 'c2' : 'c1')]),
    ]);
    // Each fetch opens with its own advertisement (v0/v1: the refs with it; v2: the capabilities only).
    expect(requests(0)).toEqual({ advertisements: 4, lsRefs: name === 'cli' ? 1 : 0, fetches: 3 });
    expect(indexed.splice(0).sort()).toEqual(['policies.v1.0.1', 'policies.v1.1.1', 'policies.v2.0.1']);
  });

  it('lists the remote once at a poll that finds nothing new, and fetches and indexes nothing', async () => {
    const mark = remote.requests.length;
    await worker.syncAll('poll');
    expect(requests(mark)).toEqual({ advertisements: 1, lsRefs: name === 'cli' ? 1 : 0, fetches: 0 });
    expect(indexed).toEqual([]);
  });

  it('writes no state.json at a poll that finds nothing new, holds one lease, and sees a moved and a deleted tag at the next', async () => {
    const stateJson = path.join(config.dataDir, 'state.json');
    const written = () => ({ ino: statSync(stateJson).ino, text: readFileSync(stateJson, 'utf8') });
    const before = written();
    await worker.syncAll('poll');
    expect(written()).toEqual(before);
    // The group's lease is its refs' lease: one file, renewed for all of them.
    expect(readdirSync(path.join(config.dataDir, 'leases')).filter((f) => f.endsWith('.json'))).toEqual([
      'policies.json',
    ]);
    git(['--git-dir', path.join(root, 'policies.git'), 'update-ref', 'refs/tags/v1.0.1', C('c2')]);
    git(['--git-dir', path.join(root, 'policies.git'), 'update-ref', '-d', 'refs/tags/v2.0.1']);
    const mark = remote.requests.length;
    await worker.syncAll('poll');
    // c2 is in the store already: the moved tag's commit is not fetched again.
    expect(requests(mark)).toEqual({ advertisements: 1, lsRefs: name === 'cli' ? 1 : 0, fetches: 0 });
    const listed = catalog.listed().map((ns) => [ns.source, ns.commit]);
    expect(listed).toEqual([
      ['policies.v2.0.0', C('c3')],
      ['policies.v1.1.1', C('c2')],
      ['policies.v1.1.0', C('c2')],
      ['policies.v1.0.1', C('c2')],
      ['policies.v1.0.0', C('c1')],
    ]);
    const saved = JSON.parse(readFileSync(stateJson, 'utf8')).sources.policies.listing;
    expect(saved.refs.map((r: { name: string; commit: string }) => [r.name, r.commit])).toEqual([
      ['refs/tags/v2.0.0', C('c3')],
      ['refs/tags/v1.1.1', C('c2')],
      ['refs/tags/v1.1.0', C('c2')],
      ['refs/tags/v1.0.1', C('c2')],
      ['refs/tags/v1.0.0', C('c1')],
    ]);
    expect(saved.gone.map((r: { name: string }) => r.name)).toEqual(['refs/tags/v2.0.1']);
    // Written again (not its inode: a file written twice through a temp file and a rename can get the first one's
    // inode number back).
    expect(written().text).not.toBe(before.text);
  });

  it('writes state.json at a sync asked for that finds nothing new: whoever asked waits for its lastSync', async () => {
    const stateJson = path.join(config.dataDir, 'state.json');
    const before = JSON.parse(readFileSync(stateJson, 'utf8')).sources.policies;
    await worker.trigger('policies', 'asked');
    const after = JSON.parse(readFileSync(stateJson, 'utf8')).sources.policies;
    expect(after.lastSync).not.toBe(before.lastSync);
    expect(after.lastSync).toBe(worker.status().sources.find((s) => s.id === 'policies')!.lastSync);
    expect(after.listing).toEqual(before.listing);
  });
});
