import { cpSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCatalog } from '../../src/catalog/index.ts';
import { loadConfig } from '../../src/config/index.ts';
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
    worker = createSyncWorker({
      config: loadConfig(file),
      catalog: createCatalog(),
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
});
