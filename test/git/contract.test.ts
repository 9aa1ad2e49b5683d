import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CACHE_USES,
  causeOf,
  fetchCommit,
  openLocalRepository,
  openStore,
  pinnedTag,
  pinRef,
  type Remote,
  readBlob,
  resolveRemoteRef,
  resolveRemoteTarget,
  unpinCommit,
  walkCommit,
} from '../../src/git/index.ts';
import { CLI_READ_AHEAD } from '../../src/git/limits.ts';
import type { GitObject } from '../../src/git/objects.ts';
import { BACKENDS } from '../helpers/backends.ts';
import { type Fault, type FaultProxy, startFaultProxy } from '../helpers/faultProxy.ts';
import { fixture, TEST_FIXTURES_DIR } from '../helpers/fixtures.ts';
import { makeRepo } from '../helpers/repo.ts';
import { gitFailure } from '../helpers/gitFailure.ts';
import { type GitHttpServer, startGitHttpServer } from '../helpers/gitHttpServer.ts';
import { tempDir } from '../helpers/temp.ts';

/**
 * What sync and serving rely on from a `Repository`, held alike for both backends (sync and the end-to-end tests
 * run on the default one only). The rest of the contract is in this folder's other `describe.each(BACKENDS)`
 * suites: remote.test.ts (refs, fetch, credentials, proxies, ssh), hostile.test.ts (redirects, bounds, bombs),
 * listTree.test.ts (hostile trees), repository.test.ts (packs, local refs), signature.test.ts, and
 * differential.test.ts (the same index and bytes from every fixture commit).
 */

const catalog = fixture('catalog');
const c1 = catalog.commits['c1']!;
const c2 = catalog.commits['c2']!;
const gitOf = (gitdir: string, ...args: string[]) =>
  execFileSync('git', ['--git-dir', gitdir, ...args], { encoding: 'utf8' }).trim();

/** git's own answer for every object of the catalog fixture: id, type and size. */
function catalogObjects(): Array<{ oid: string; type: string; size: number }> {
  return gitOf(catalog.gitdir, 'cat-file', '--batch-all-objects', '--batch-check')
    .split('\n')
    .map((line) => {
      const [oid, type, size] = line.split(' ') as [string, string, string];
      return { oid, type, size: Number(size) };
    });
}

/** The ids a pack holds, read from its index (version 2: a fan-out table of 256 counts, then the ids). */
function objectsOf(idx: string): string[] {
  const bytes = readFileSync(idx);
  const count = bytes.readUInt32BE(8 + 255 * 4);
  const ids = 8 + 256 * 4;
  return Array.from({ length: count }, (_, i) => bytes.toString('hex', ids + i * 20, ids + (i + 1) * 20));
}

const packsOf = (gitdir: string) =>
  readdirSync(path.join(gitdir, 'objects', 'pack')).filter((file) => file.endsWith('.idx'));

/** Each fault of test/sync/worker.test.ts's remote, and the reason a sync reports for it. */
const FAULTS: Array<[string, Fault, string]> = [
  ['HTTP 401', { kind: 'status', status: 401 }, 'source-auth-failed'],
  ['HTTP 403', { kind: 'status', status: 403 }, 'source-auth-failed'],
  ['HTTP 404', { kind: 'status', status: 404 }, 'source-repository-not-found'],
  ['HTTP 500', { kind: 'status', status: 500 }, 'source-http-error'],
  ['HTTP 503', { kind: 'status', status: 503 }, 'source-http-error'],
  ['a remote that stops answering', { kind: 'hang' }, 'source-timeout'],
  ['an empty pack', { kind: 'empty-pack' }, 'source-pack-invalid'],
  ['a truncated pack', { kind: 'truncate-pack', bytes: 200 }, 'source-pack-invalid'],
  // What a cut a few hundred bytes in meets when the server sends progress lines first (a slow server does).
  ['an answer that ends before its pack', { kind: 'cut-before-pack' }, 'source-pack-invalid'],
];

// The fixture repositories, served read-only as built once for the run: no copy per test or per backend.
let server: GitHttpServer;
let proxy: FaultProxy;
beforeAll(async () => {
  server = await startGitHttpServer({
    root: TEST_FIXTURES_DIR,
    config: { 'uploadpack.allowAnySHA1InWant': 'true', 'uploadpack.allowFilter': 'true' },
  });
  proxy = await startFaultProxy(server.url);
});
afterAll(async () => {
  await proxy.close();
  await server.close();
});

describe.each(BACKENDS)('the Repository contract, $name backend', ({ settings }) => {
  const freshStore = () => openStore(path.join(tempDir('skillpin-store-'), 'repo.git'), settings);
  const remote = (): Remote => ({ url: server.urlFor('catalog.git') });

  it('lists only the refs asked for, an annotated tag with the commit it peels to', async () => {
    const repo = await freshStore();
    const refs = await repo.listRemoteRefs(remote(), ['refs/heads/main', 'refs/tags/v2', 'refs/tags/none']);
    expect(refs.sort((a, b) => a.name.localeCompare(b.name))).toEqual([
      { name: 'refs/heads/main', oid: c2 },
      { name: 'refs/tags/v2', oid: catalog.refs['refs/tags/v2'], peeled: c2 },
    ]);
    await repo.close();
  });

  it('one resolve and one fetch ask the remote for its ref advertisement twice', async () => {
    const repo = await freshStore();
    const before = server.requests.length;
    expect(await resolveRemoteRef(repo, remote(), 'main')).toBe(c2);
    await fetchCommit(repo, remote(), c2);
    const asked = server.requests.slice(before).filter((r) => r.path.endsWith('/info/refs'));
    expect(asked.length).toBe(2);
    await repo.close();
  });

  it('given a commit the store holds, fetches only the objects it lacks, in a pack of its own', async () => {
    const repo = await freshStore();
    await fetchCommit(repo, remote(), c1);
    const first = packsOf(repo.gitdir);
    await fetchCommit(repo, remote(), c2, { have: c1 });
    const added = packsOf(repo.gitdir).filter((idx) => !first.includes(idx));
    expect(added.length).toBe(1);
    // Every object c2 adds to c1 came, and not one of the blobs c1 had (git may send a few trees again).
    const sent = new Set(objectsOf(path.join(repo.gitdir, 'objects', 'pack', added[0]!)));
    const lacking = gitOf(catalog.gitdir, 'rev-list', '--objects', c2, '--not', c1)
      .split('\n')
      .map((line) => line.split(' ')[0]!);
    expect(lacking.filter((oid) => !sent.has(oid))).toEqual([]);
    // Not one of the blobs both commits hold came again (git completes a thin pack with c1's delta bases).
    const blobs = (commit: string) =>
      new Set(gitOf(catalog.gitdir, 'ls-tree', '-r', '--object-only', commit).split('\n'));
    const [old, now] = [blobs(c1), blobs(c2)];
    expect([...sent].filter((oid) => old.has(oid) && now.has(oid))).toEqual([]);
    expect(gitOf(repo.gitdir, 'for-each-ref', '--format=%(refname)').split('\n').sort()).toEqual(
      [pinRef(c1), pinRef(c2)].sort(),
    );
    await repo.close();
  });

  it('fetches an annotated tag with its commit and keeps it pinned beside it; unpinning drops both refs', async () => {
    const repo = await freshStore();
    const target = await resolveRemoteTarget(repo, remote(), 'v2');
    expect(target).toEqual({ commit: c2, tag: catalog.refs['refs/tags/v2'], ref: 'refs/tags/v2' });
    await fetchCommit(repo, remote(), c2, { tag: target.tag! });
    expect((await repo.readObject(target.tag!))?.type).toBe('tag');
    expect(await pinnedTag(repo, c2)).toBe(target.tag);
    await unpinCommit(repo, c2);
    expect([await repo.readRef(pinRef(c2)), await pinnedTag(repo, c2)]).toEqual([undefined, undefined]);
    await repo.close();
  });

  it('writes, reads and deletes refs; a ref that is not there reads as undefined', async () => {
    const repo = await freshStore();
    await fetchCommit(repo, remote(), c2);
    await repo.writeRef('refs/skillpin/test/a', c2);
    expect(await repo.readRef('refs/skillpin/test/a')).toBe(c2);
    expect(gitOf(repo.gitdir, 'rev-parse', 'refs/skillpin/test/a')).toBe(c2);
    await repo.deleteRef('refs/skillpin/test/a');
    expect(await repo.readRef('refs/skillpin/test/a')).toBeUndefined();
    expect(await repo.readRef('refs/skillpin/test/never')).toBeUndefined();
    // Moved by another program (a commit in a followed local repository), then packed: read as it is now.
    gitOf(repo.gitdir, 'update-ref', 'refs/skillpin/test/b', c2);
    expect(await repo.readRef('refs/skillpin/test/b')).toBe(c2);
    gitOf(repo.gitdir, 'pack-refs', '--all');
    gitOf(repo.gitdir, 'update-ref', '-d', pinRef(c2));
    expect([await repo.readRef('refs/skillpin/test/b'), await repo.readRef(pinRef(c2))]).toEqual([
      c2,
      undefined,
    ]);
    await repo.close();
  });

  it('fetches a commit of another history (a force-push) into a store whose commits the remote does not know', async () => {
    const repo = await freshStore();
    await fetchCommit(repo, remote(), c2);
    const other = fixture('symlinks');
    const commit = Object.values(other.commits).at(-1)!;
    await fetchCommit(repo, { url: server.urlFor('symlinks.git') }, commit, { have: c2 });
    expect((await walkCommit(repo, commit)).entries.length).toBe(
      gitOf(other.gitdir, 'ls-tree', '-r', commit).split('\n').length,
    );
    expect(await repo.readRef(pinRef(commit))).toBe(commit);
    await repo.close();
  });

  it("says what a ref names as readRef does, and the object's type where it says one, its real type", async () => {
    const repo = await openLocalRepository(catalog.gitdir, settings);
    const names = ['HEAD', 'refs/heads/main', 'refs/tags/v1', 'refs/tags/v2', 'refs/tags/none', 'refs/heads'];
    const targets = await Promise.all(names.map((name) => repo.refTarget(name)));
    const oids = await Promise.all(names.map((name) => repo.readRef(name)));
    expect(targets.map((target) => target?.oid)).toEqual(oids);
    expect(oids.slice(0, 3)).toEqual([c2, c2, catalog.commits['c1']]);
    expect(oids.slice(4)).toEqual([undefined, undefined]);
    for (const target of targets)
      if (target?.type !== undefined) expect((await repo.readObject(target.oid))?.type).toBe(target.type);
    // The git binary's for-each-ref says each ref's type (HEAD's it does not): a branch needs no object read.
    if (settings.backend === 'cli')
      expect(targets.slice(0, 4).map((target) => target?.type)).toEqual([
        undefined,
        'commit',
        'commit',
        'tag',
      ]);
    await repo.close();
  });

  it('reads HEAD of a repository with no commit yet (an unborn branch) as undefined', async () => {
    const empty = path.join(tempDir('skillpin-unborn-'), 'repo.git');
    gitOf(empty, 'init', '--quiet', '--bare', '--initial-branch=main');
    const repo = await openLocalRepository(empty, settings);
    expect([await repo.readRef('HEAD'), await repo.readRef('refs/heads/main')]).toEqual([
      undefined,
      undefined,
    ]);
    await repo.close();
  });

  it('reads every object as git does: readObject, readEach in order, objectSizes, missingObjects, prefixes', async () => {
    const objects = catalogObjects();
    const absent = 'f'.repeat(40);
    const repo = await openLocalRepository(catalog.gitdir, settings);
    const ids = [...objects.map((o) => o.oid), absent];
    const one = await Promise.all(ids.map((oid) => repo.readObject(oid)));
    expect(one.map((found) => found?.type)).toEqual([...objects.map((o) => o.type), undefined]);
    expect(one.map((found) => found?.data.length)).toEqual([...objects.map((o) => o.size), undefined]);
    expect(Buffer.from(one[0]!.data)).toEqual(
      execFileSync('git', ['--git-dir', catalog.gitdir, 'cat-file', objects[0]!.type, objects[0]!.oid]),
    );
    if (repo.readEach !== undefined) {
      const streamed: Array<[string, GitObject | undefined]> = [];
      await repo.readEach([absent, ...ids], (oid, found) => streamed.push([oid, found]));
      expect(streamed).toEqual([absent, ...ids].map((oid, i) => [oid, i === 0 ? undefined : one[i - 1]]));
    }
    expect(await repo.objectSizes(ids)).toEqual([...objects.map((o) => o.size), undefined]);
    expect(await repo.missingObjects([c2, absent, c1])).toEqual([absent]);
    expect(await repo.objectsWithPrefix(c2.slice(0, 7))).toEqual([c2]);
    expect(await repo.objectsWithPrefix('ffffffff')).toEqual([]);
    await repo.close();
  });

  it('answers every read under way across a refresh, a stream cut in two by one included, each with its own bytes', async () => {
    // Incompressible blobs: 64 large ones (the last answers are still in the pipe when an ended reader's git
    // exits), and more in all than the cli backend asks of one process at once (CLI_READ_AHEAD).
    const files = Object.fromEntries(
      Array.from(
        { length: CLI_READ_AHEAD + 64 },
        (_, i) => [`f/${i}.bin`, randomBytes(i < 64 ? 96 * 1024 + i : 100 + i)] as const,
      ),
    );
    const made = makeRepo(files);
    const gitdir = path.join(made.dir, '.git');
    const listed = new Map(
      gitOf(gitdir, 'ls-tree', '-r', made.commit)
        .split('\n')
        .map((line) => [line.split('\t')[1]!, line.split(' ')[2]!.slice(0, 40)]),
    );
    const blobs = Object.keys(files).map((file) => listed.get(file)!);
    const expected = new Map(Object.values(files).map((bytes, i) => [blobs[i]!, bytes.toString('hex')]));
    const repo = await openLocalRepository(gitdir, settings);
    for (let round = 0; round < 3; round++) {
      const reads = blobs.map((oid) => repo.readObject(oid));
      repo.refresh();
      const again = blobs.map((oid) => repo.readObject(oid));
      for (const [i, found] of (await Promise.all([...reads, ...again])).entries())
        expect([found?.type, Buffer.from(found!.data).toString('hex')]).toEqual([
          'blob',
          expected.get(blobs[i % blobs.length]!),
        ]);
    }
    if (repo.readEach !== undefined) {
      const streamed = new Map<string, string | undefined>();
      let refreshed = false;
      await repo.readEach(blobs, (oid, found) => {
        streamed.set(oid, found === undefined ? undefined : Buffer.from(found.data).toString('hex'));
        // Cut in two after the first answer: the rest are asked of the reader after the refresh.
        if (!refreshed) repo.refresh();
        refreshed = true;
      });
      expect(streamed).toEqual(expected);
    }
    await repo.close();
  });

  it('a store whose pack went: missingObjects sees it at once, reads fail source-incomplete, a fetch restores it', async () => {
    const repo = await freshStore();
    await fetchCommit(repo, remote(), c2);
    const blob = gitOf(catalog.gitdir, 'rev-parse', `${c2}:skills/pdf-forms/SKILL.md`);
    expect((await readBlob(repo, blob)).byteLength).toBeGreaterThan(0);
    rmSync(path.join(repo.gitdir, 'objects', 'pack'), { recursive: true });
    // Once told to forget what it knew, asked of the store as it is on disk (as sync checks a store).
    repo.refresh();
    expect(await repo.missingObjects([c2, blob])).toEqual([c2, blob]);
    await repo.close();
    const reopened = await openStore(repo.gitdir, settings);
    expect((await gitFailure(readBlob(reopened, blob))).code).toBe('source-incomplete');
    await fetchCommit(reopened, remote(), c2);
    expect((await walkCommit(reopened, c2)).entries.length).toBe(19);
    expect((await readBlob(reopened, blob)).byteLength).toBeGreaterThan(0);
    await reopened.close();
  });

  it('keeps reading a local repository that another program repacks (git gc), with the pack it read deleted', async () => {
    const copy = path.join(tempDir('skillpin-repack-'), 'catalog.git');
    cpSync(catalog.gitdir, copy, { recursive: true });
    gitOf(copy, 'repack', '-a', '-d', '-q');
    const repo = await openLocalRepository(copy, settings);
    const blob = gitOf(copy, 'rev-parse', `${c2}:skills/pdf-forms/references/FORMS.md`);
    const bytes = await readBlob(repo, blob);
    gitOf(copy, '-c', 'pack.compression=1', 'repack', '-a', '-d', '-f', '-q');
    // Enough reads for a cache that still holds the old pack in memory (isomorphic) to be replaced.
    for (let i = 0; i <= CACHE_USES; i++)
      expect((await readBlob(repo, blob)).byteLength).toBe(bytes.byteLength);
    expect((await walkCommit(repo, c2)).entries.length).toBe(19);
    await repo.close();
  });

  // Each fault where a sync meets it: listing the refs, or fetching a commit. A pack fault meets only the fetch (the
  // cli backend lists refs over protocol v2, a POST a cut would also cut; the isomorphic one with a GET).
  const cases = FAULTS.flatMap(([what, fault, reason]) =>
    (fault.kind === 'status' || fault.kind === 'hang'
      ? (['refs', 'fetch'] as const)
      : (['fetch'] as const)
    ).map((step) => ({ what, fault, reason, step })),
  );
  it.each(cases)(
    'on $what while it $step: fails $reason, pins nothing, and the same store syncs once the remote is healthy',
    async ({ fault, reason, step }) => {
      const repo = await freshStore();
      const url = `${proxy.url}/catalog.git`;
      // sync.timeout is short only for the remote that hangs: a healthy one may be slow on a busy machine.
      const faulty: Remote = { url, timeoutMs: fault.kind === 'hang' ? 1000 : undefined };
      proxy.setFault(fault);
      try {
        const failing =
          step === 'refs' ? resolveRemoteRef(repo, faulty, 'main') : fetchCommit(repo, faulty, c2);
        expect((await gitFailure(failing)).code).toBe(reason);
      } finally {
        proxy.setFault({ kind: 'pass' });
      }
      expect(existsSync(path.join(repo.gitdir, 'refs', 'skillpin'))).toBe(false);
      await fetchCommit(repo, { url }, await resolveRemoteRef(repo, { url }, 'main'));
      expect(await repo.readRef(pinRef(c2))).toBe(c2);
      await repo.close();
    },
  );

  it('reports a remote that cannot be reached in our sentence, never git’s or Node’s', async () => {
    const repo = await freshStore();
    const error = await gitFailure(resolveRemoteRef(repo, { url: 'http://127.0.0.1:9/none.git' }, 'main'));
    expect(error).toEqual({
      code: 'source-unreachable',
      message:
        'listing the refs of http://127.0.0.1:9/none.git: the remote could not be reached (connection refused or reset, unknown host, no route)',
    });
    await repo.close();
  });

  // The operator's stderr says what git or Node said (serve's report when no source synced at start); a client never.
  it('keeps what git or Node said of an unreachable remote, one line, for causeOf', async () => {
    const repo = await freshStore();
    const said = async (url: string) =>
      causeOf(await resolveRemoteRef(repo, { url }, 'main').catch((error: unknown) => error));
    const [refused, unknown] = [
      await said('http://127.0.0.1:9/none.git'),
      await said('http://nonexistent.invalid/none.git'),
    ];
    await repo.close();
    expect([refused, unknown]).toEqual(
      settings.backend === 'cli'
        ? [
            expect.stringMatching(
              /^unable to access 'http:\/\/127\.0\.0\.1:9\/none\.git\/': Failed to connect to 127\.0\.0\.1 port 9 after \d+ ms: Couldn't connect to server$/,
            ),
            "unable to access 'http://nonexistent.invalid/none.git/': Could not resolve host: nonexistent.invalid",
          ]
        : [
            'connect ECONNREFUSED 127.0.0.1:9',
            // EAI_AGAIN where the machine has no resolver to ask.
            expect.stringMatching(/^getaddrinfo (?:ENOTFOUND|EAI_AGAIN) nonexistent\.invalid$/),
          ],
    );
  });
});
