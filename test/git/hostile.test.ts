import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  fetchCommit,
  GitError,
  openLocalRepository,
  openStore,
  pinRef,
  readBlob,
  type Remote,
  removeIncomplete,
  resolveRemoteRef,
  walkCommit,
} from '../../src/git/index.ts';
import { openCliRepository } from '../../src/git/cli/backend.ts';
import { catFileReader } from '../../src/git/cli/catFile.ts';
import { MAX_LARGE_BLOB_BYTES, MAX_OBJECT_BYTES } from '../../src/git/limits.ts';
import { BACKENDS, withEnv } from '../helpers/backends.ts';
import { type FaultProxy, startFaultProxy } from '../helpers/faultProxy.ts';
import { startFaultProxyProcess } from '../helpers/faultProxyProcess.ts';
import { fixture, TEST_FIXTURES_DIR } from '../helpers/fixtures.ts';
import { type GitHttpServer, startGitHttpServer } from '../helpers/gitHttpServer.ts';
import {
  BOMB_BYTES,
  type BombRepo,
  bombRepo,
  type BuiltRepo,
  LARGE_BLOB_FILES,
  largeBlobRepo,
  largeBlobsRepo,
  loopbackCertificate,
  lyingEntry,
  oversizedEntry,
} from '../helpers/hostilePacks.ts';
import { tempDir } from '../helpers/temp.ts';

const c2 = fixture('catalog').commits['c2']!;
const token = 'tok-7c1e55a0b9d2';
/** The Authorization header a client sends with the token: what must never reach another origin. */
const basic = `Basic ${Buffer.from(`x-access-token:${token}`).toString('base64')}`;

async function failure(call: Promise<unknown>): Promise<{ code: string; message: string; log?: string }> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(GitError);
  const { code, message, log } = error as GitError;
  return { code, message, ...(log === undefined ? {} : { log }) };
}

/** A served root holding a bare clone of the catalog fixture, made once for the file: the tests only read it. */
let served: string | undefined;
function servedCatalog(): string {
  if (served !== undefined) return served;
  const root = tempDir('skillpin-hostile-');
  execFileSync('git', [
    'clone',
    '--quiet',
    '--bare',
    fixture('catalog').gitdir,
    path.join(root, 'catalog.git'),
  ]);
  served = root;
  return root;
}

/** How much this process's peak resident set size (getrusage) grew since the call: what a transfer held at most. */
function peakRss() {
  const before = process.resourceUsage().maxRSS;
  return { grownMiB: () => (process.resourceUsage().maxRSS - before) / 1024 };
}

const packFiles = (gitdir: string) => readdirSync(path.join(gitdir, 'objects', 'pack')).sort();

describe.each(BACKENDS)('hostile remotes, $name backend', ({ name, settings }) => {
  const freshStore = () => openStore(path.join(tempDir('skillpin-store-'), 'repo.git'), settings);
  let root: string;
  let locked: GitHttpServer;
  let open: GitHttpServer;
  beforeAll(async () => {
    root = servedCatalog();
    locked = await startGitHttpServer({
      root,
      auth: { username: 'x-access-token', password: token },
      config: { 'uploadpack.allowAnySHA1InWant': 'true' },
    });
    open = await startGitHttpServer({ root, config: { 'uploadpack.allowAnySHA1InWant': 'true' } });
  });
  afterAll(async () => {
    await locked.close();
    await open.close();
  });

  describe('credentials go only to the configured origin', () => {
    // `home` is the configured origin; `elsewhere`, on another port, is another origin in front of the same server.
    let home: FaultProxy;
    let elsewhere: FaultProxy;
    beforeAll(async () => {
      home = await startFaultProxy(locked.url);
      elsewhere = await startFaultProxy(locked.url);
    });
    afterAll(async () => {
      await home.close();
      await elsewhere.close();
    });
    const fresh = () => {
      home.seen.length = 0;
      elsewhere.seen.length = 0;
    };
    const refused = (url: string) => ({
      code: 'source-auth-failed',
      message: `listing the refs of ${url}: the remote refused access: credentials missing or not accepted`,
    });

    it('an authenticated request redirected to another origin arrives there without the token', async () => {
      fresh();
      home.setFault({ kind: 'redirect', to: elsewhere.url, when: 'authenticated' });
      const url = `${home.url}/catalog.git`;
      const error = await failure(resolveRemoteRef(await freshStore(), { url, token }, 'main'));
      expect({ code: error.code, message: error.message }).toEqual(refused(url));
      expect(home.seen.filter((r) => r.authorization === basic).length).toBeGreaterThan(0);
      expect(elsewhere.seen.length).toBeGreaterThan(0);
      expect(elsewhere.seen.filter((r) => r.authorization !== undefined)).toEqual([]);
    });

    it('a redirect to another origin that asks for credentials never gets the token', async () => {
      fresh();
      home.setFault({ kind: 'redirect', to: elsewhere.url });
      const url = `${home.url}/catalog.git`;
      const error = await failure(resolveRemoteRef(await freshStore(), { url, token }, 'main'));
      expect({ code: error.code, message: error.message }).toEqual(refused(url));
      expect(elsewhere.seen.map((r) => [r.method, r.authorization ?? null])).toContainEqual(['GET', null]);
      expect(elsewhere.seen.filter((r) => r.authorization !== undefined)).toEqual([]);
    });

    it('a redirect within the configured origin keeps the token, and the transfer goes where it landed', async () => {
      fresh();
      home.setFault({ kind: 'redirect', from: '/old.git/', to: `${home.url}/catalog.git`, status: 301 });
      const repo = await freshStore();
      const remote = { url: `${home.url}/old.git`, token };
      expect(await resolveRemoteRef(repo, remote, 'main')).toBe(c2);
      await fetchCommit(repo, remote, c2);
      expect((await walkCommit(repo, c2)).entries.length).toBe(19);
      // Only the first request of each transfer is redirected; the pack is asked for where it landed.
      const posts = home.seen.filter((r) => r.method === 'POST').map((r) => r.url);
      expect(posts.length).toBeGreaterThan(0);
      expect(posts.every((url) => url === '/catalog.git/git-upload-pack')).toBe(true);
      await repo.close();
    });

    it('with redirects: refuse, any redirect fails', async () => {
      home.setFault({ kind: 'redirect', from: '/old.git/', to: `${home.url}/catalog.git` });
      const url = `${home.url}/old.git`;
      const error = await failure(
        resolveRemoteRef(await freshStore(), { url, token, redirects: 'refuse' }, 'main'),
      );
      expect({ code: error.code, message: error.message }).toEqual({
        code: 'source-redirect-refused',
        message: `listing the refs of ${url}: the remote redirected, and sync.redirects is refuse`,
      });
    });

    it('a redirect loop stops after 20 redirects', async () => {
      fresh();
      home.setFault({ kind: 'redirect', from: '/loop.git/', to: `${home.url}/loop.git` });
      const url = `${home.url}/loop.git`;
      const error = await failure(resolveRemoteRef(await freshStore(), { url }, 'main'));
      expect({ code: error.code, message: error.message }).toEqual({
        code: 'source-redirect-refused',
        message: `listing the refs of ${url}: the remote redirected more than 20 times`,
      });
      expect(home.seen.length).toBe(21);
    });

    it('https that redirects to http is refused, and the http remote is never asked', async () => {
      const tls = loopbackCertificate(tempDir('skillpin-tls-'));
      const secure = await startFaultProxy(locked.url, { tls });
      const plain = await startFaultProxy(locked.url);
      try {
        secure.setFault({ kind: 'redirect', to: plain.url });
        const url = `${secure.url}/catalog.git`;
        const error = await withEnv({ GIT_SSL_CAINFO: tls.certFile }, async () =>
          failure(resolveRemoteRef(await freshStore(), { url, token }, 'main')),
        );
        expect({ code: error.code, message: error.message }).toEqual({
          code: 'source-insecure-redirect',
          message: `listing the refs of ${url}: the remote redirected from https to http, which is refused`,
        });
        expect(secure.seen.length).toBe(1);
        expect(plain.seen).toEqual([]);
      } finally {
        await secure.close();
        await plain.close();
      }
    });
  });

  it('a remote that echoes the credentials in its answer: the detail is our sentence, the log holds no credential', async () => {
    const echo = await startFaultProxy(locked.url);
    try {
      echo.setFault({ kind: 'echo-credentials' });
      const url = `${echo.url}/catalog.git`;
      const error = await failure(resolveRemoteRef(await freshStore(), { url, token }, 'main'));
      expect({ code: error.code, message: error.message }).toEqual({
        code: 'source-fetch-failed',
        message: `listing the refs of ${url}: the remote answered with an error (its words are in the log)`,
      });
      // The remote did receive (and echo) the credentials; what we keep of its words holds none.
      expect(echo.seen.some((r) => r.authorization === basic)).toBe(true);
      expect(error.log).toContain('Authorization: ***');
      for (const secret of [token, basic.slice(6), 'eC1hY2Nlc3MtdG9rZW4'])
        expect(JSON.stringify(error)).not.toContain(secret);
    } finally {
      await echo.close();
    }
  });

  describe('every transfer is bounded', () => {
    let proxy: FaultProxy;
    beforeAll(async () => {
      proxy = await startFaultProxy(open.url);
    });
    afterAll(async () => proxy.close());

    it('an endless pack stops at maxFetchBytes, and nothing of it stays in the store', async () => {
      // The proxy pumps the pack from a process of its own: this process's peak is what the fetch held.
      const endless = await startFaultProxyProcess(open.url, { kind: 'endless-pack' });
      const repo = await freshStore();
      const url = `${endless.url}/catalog.git`;
      const peak = peakRss();
      const error = await failure(fetchCommit(repo, { url, maxFetchBytes: 8 * 1024 * 1024 }, c2)).finally(
        () => endless.close(),
      );
      // Under the isomorphic backend the transfer runs in this process: what it held stays near the bound.
      expect(peak.grownMiB()).toBeLessThan(64);
      expect({ code: error.code, message: error.message }).toEqual({
        code: 'source-too-large',
        message: `fetching ${c2} from ${url}: the transfer passed 8388608 bytes (sync.maxFetchBytes)`,
      });
      expect(packFiles(repo.gitdir)).toEqual([]);
      await repo.close();
    });

    // A commit, tree or tag over MAX_OBJECT_BYTES, or a delta whose header needs an object over it (its result,
    // or its base): refused once the header arrived.
    it.each(['commit', 'tree', 'tag', 'delta-result', 'delta-base'] as const)(
      'a %s over MAX_OBJECT_BYTES is source-too-large once its header arrived, and nothing stays',
      async (kind) => {
        proxy.setFault({ kind: 'endless-pack', first: await oversizedEntry(kind) });
        const repo = await freshStore();
        const url = `${proxy.url}/catalog.git`;
        const error = await failure(fetchCommit(repo, { url }, c2));
        proxy.setFault({ kind: 'pass' });
        expect({ code: error.code, message: error.message }).toEqual({
          code: 'source-too-large',
          message: `fetching ${c2} from ${url}: an object of the transfer inflates to more than ${MAX_OBJECT_BYTES} bytes`,
        });
        expect(packFiles(repo.gitdir)).toEqual([]);
        await repo.close();
      },
    );

    it('an object that inflates past the size its header declares is source-pack-invalid, and nothing stays', async () => {
      proxy.setFault({ kind: 'endless-pack', first: await lyingEntry() });
      const repo = await freshStore();
      const url = `${proxy.url}/catalog.git`;
      const peak = peakRss();
      const error = await failure(fetchCommit(repo, { url }, c2));
      proxy.setFault({ kind: 'pass' });
      // Inflated no further than its header says (100 bytes), never to the 64 MiB its stream holds.
      expect(peak.grownMiB()).toBeLessThan(32);
      expect({ code: error.code, message: error.message }).toEqual({
        code: 'source-pack-invalid',
        message: `fetching ${c2} from ${url}: the remote sent an empty, truncated or corrupt pack`,
      });
      expect(packFiles(repo.gitdir)).toEqual([]);
      await repo.close();
    });

    it('a drip fails at sync.deadline, long before the idle timeout', async () => {
      // One byte every 2 s after the first 100 of the pack answer: the transfer moves, only slower than anything useful.
      proxy.setFault({ kind: 'drip', everyMs: 2000, after: 100, packOnly: true });
      const repo = await freshStore();
      const url = `${proxy.url}/catalog.git`;
      const remote: Remote = { url, timeoutMs: 60_000, deadlineMs: 3000 };
      const started = Date.now();
      const error = await failure(fetchCommit(repo, remote, c2));
      expect({ code: error.code, message: error.message }).toEqual({
        code: 'source-timeout',
        message: `fetching ${c2} from ${url}: the transfer did not finish within 3000 ms (sync.deadline)`,
      });
      expect(Date.now() - started).toBeLessThan(15_000);
      expect(packFiles(repo.gitdir).filter((file) => !/^pack-[0-9a-f]+\.(pack|idx|rev)$/.test(file))).toEqual(
        [],
      );
      proxy.setFault({ kind: 'pass' });
      await repo.close();
    });
  });

  describe('a blob over MAX_OBJECT_BYTES under paths: kept, never read', () => {
    let server: GitHttpServer;
    let large: BuiltRepo;
    let larger: BuiltRepo;
    beforeAll(async () => {
      large = await largeBlobRepo();
      larger = await largeBlobsRepo();
      server = await startGitHttpServer({ root: TEST_FIXTURES_DIR });
    }, 120_000);
    afterAll(async () => server.close());

    it('the commit is fetched and pinned with it; its size comes from its header, and a read of it is refused', async () => {
      const repo = await freshStore();
      const url = server.urlFor('large-blob.git');
      const blob = large.blobs['skills/large/data.bin']!;
      const peak = peakRss();
      await fetchCommit(repo, { url }, large.commit, { paths: ['skills'] });
      // 64 MiB came inflated through this process (the isomorphic backend hashes it, the cli backend's scan
      // follows it): it was never held whole.
      expect(peak.grownMiB()).toBeLessThan(48);
      expect(await repo.readRef(pinRef(large.commit))).toBe(large.commit);
      expect(await repo.objectSizes([blob, large.blobs['skills/good/notes.md']!])).toEqual([
        MAX_OBJECT_BYTES + 1,
        LARGE_BLOB_FILES['skills/good/notes.md'].length,
      ]);
      const error = await failure(readBlob(repo, blob));
      expect({ code: error.code, message: error.message }).toEqual({
        code: 'source-too-large',
        message: `object ${blob} inflates to ${MAX_OBJECT_BYTES + 1} bytes, more than the ${MAX_OBJECT_BYTES} one object may`,
      });
      await repo.close();
    });

    it('blobs over MAX_OBJECT_BYTES past MAX_LARGE_BLOB_BYTES together are source-too-large, and nothing stays', async () => {
      const repo = await freshStore();
      const url = server.urlFor('large-blobs.git');
      const error = await failure(fetchCommit(repo, { url }, larger.commit, { paths: ['skills'] }));
      expect({ code: error.code, message: error.message }).toEqual({
        code: 'source-too-large',
        message: `fetching ${larger.commit} from ${url}: the blobs over ${MAX_OBJECT_BYTES} bytes of the transfer inflate to more than ${MAX_LARGE_BLOB_BYTES} bytes together`,
      });
      expect(existsSync(path.join(repo.gitdir, 'refs', 'skillpin'))).toBe(false);
      // The cli backend fetched the commit's trees first (paths: blobs follow): those stay, no blob does.
      expect(await repo.missingObjects(Object.values(larger.blobs))).toEqual(Object.values(larger.blobs));
      await repo.close();
    });
  });

  describe('a compression bomb: one commit holding 1 GiB of zeros in a pack of about 1 MB', () => {
    let bomb: BombRepo;
    let server: GitHttpServer;
    beforeAll(async () => {
      bomb = await bombRepo();
      server = await startGitHttpServer({ root: TEST_FIXTURES_DIR });
    }, 120_000);
    afterAll(async () => server.close());

    it('fails source-too-large with the same sentence under both backends, and pins nothing', async () => {
      const repo = await freshStore();
      const url = server.urlFor('bomb.git');
      const peak = peakRss();
      const error = await failure(fetchCommit(repo, { url }, bomb.commit));
      // 1 GiB is what the bomb inflates to; this process (the isomorphic backend's transfer) holds far less.
      expect(peak.grownMiB()).toBeLessThan(160);
      expect({ code: error.code, message: error.message }).toEqual({
        code: 'source-too-large',
        message: `fetching ${bomb.commit} from ${url}: the blobs over 67108864 bytes of the transfer inflate to more than 268435456 bytes together`,
      });
      expect(existsSync(path.join(repo.gitdir, 'refs', 'skillpin'))).toBe(false);
      expect(packFiles(repo.gitdir)).toEqual([]);
      await repo.close();
    });

    it('reads a blob’s size from its header, and refuses to inflate it', async () => {
      const repo = await openLocalRepository(bomb.gitdir, settings);
      expect(await repo.objectSizes([bomb.blob, 'f'.repeat(40)])).toEqual([BOMB_BYTES, undefined]);
      const error = await failure(readBlob(repo, bomb.blob));
      expect({ code: error.code, message: error.message }).toEqual({
        code: 'source-too-large',
        message: `object ${bomb.blob} inflates to ${BOMB_BYTES} bytes, more than the 67108864 one object may`,
      });
      await repo.close();
    });
  });

  it('writes each pack’s index byte for byte as git index-pack does, deltas included', async () => {
    const repo = await freshStore();
    const url = open.urlFor('catalog.git');
    const c1 = fixture('catalog').commits['c1']!;
    await fetchCommit(repo, { url }, c1);
    await fetchCommit(repo, { url }, c2, { have: c1 });
    const packDir = path.join(repo.gitdir, 'objects', 'pack');
    const indexes = packFiles(repo.gitdir).filter((file) => file.endsWith('.idx'));
    expect(indexes.length).toBe(2);
    for (const idx of indexes) {
      const check = path.join(tempDir('skillpin-idx-'), 'check.idx');
      execFileSync('git', ['index-pack', '-o', check, path.join(packDir, idx.replace(/\.idx$/, '.pack'))]);
      expect(readFileSync(path.join(packDir, idx)).equals(readFileSync(check))).toBe(true);
    }
    await repo.close();
  });

  it(`${name === 'cli' ? 'sweeps' : 'sweeps (the same code)'} what an interrupted transfer left, and keeps whole packs`, async () => {
    const repo = await freshStore();
    await fetchCommit(repo, { url: open.urlFor('catalog.git') }, c2);
    const whole = packFiles(repo.gitdir);
    const packDir = path.join(repo.gitdir, 'objects', 'pack');
    const orphan = `pack-${'a'.repeat(40)}`;
    const left = [
      'tmp_pack_Xy12ab',
      'tmp_idx_Qr34cd',
      `${orphan}.pack`,
      `pack-${'b'.repeat(40)}.idx`,
      `pack-${'b'.repeat(40)}.rev`,
    ];
    for (const file of left) writeFileSync(path.join(packDir, file), 'partial');
    mkdirSync(path.join(repo.gitdir, 'objects', 'ab'), { recursive: true });
    writeFileSync(path.join(repo.gitdir, 'objects', 'ab', 'tmp_obj_1'), 'partial');
    writeFileSync(path.join(repo.gitdir, 'shallow.lock'), '');
    expect((await removeIncomplete(repo.gitdir)).sort()).toEqual(
      [...left.map((file) => `objects/pack/${file}`), 'objects/ab/tmp_obj_1', 'shallow.lock'].sort(),
    );
    expect(packFiles(repo.gitdir)).toEqual(whole);
    expect((await walkCommit(repo, c2)).entries.length).toBe(19);
    await repo.close();
  });
});

describe('object headers under the cli backend', () => {
  it('come alike from the reader (git 2.36 --batch-command) and from --batch-check (older git)', async () => {
    const bomb = await bombRepo();
    const commands = await openCliRepository(bomb.gitdir, false, { git: 'git', batchCommand: true });
    const check = await openCliRepository(bomb.gitdir, false, { git: 'git', batchCommand: false });
    const ids = [bomb.blob, 'f'.repeat(40), bomb.commit];
    const sizes = await check.objectSizes(ids);
    expect(sizes.slice(0, 2)).toEqual([BOMB_BYTES, undefined]);
    expect(await commands.objectSizes(ids)).toEqual(sizes);
    // A header alone never inflates the object: the same reader goes on to read the commit.
    expect((await commands.readObject(bomb.commit))?.type).toBe('commit');
    await Promise.all([commands.close(), check.close()]);
    const reader = catFileReader('git', bomb.gitdir, undefined, true);
    const headers: unknown[] = [];
    await reader.headers!([bomb.blob, 'f'.repeat(40)], 1, (oid, found) => headers.push([oid, found]));
    expect(headers).toEqual([
      [bomb.blob, { type: 'blob', size: BOMB_BYTES }],
      ['f'.repeat(40), undefined],
    ]);
    // Many reads, one asked at a time, each handed over as it arrives; a missing one as undefined.
    const seen: Array<string | undefined> = [];
    await reader.readEach([bomb.commit, 'f'.repeat(40), bomb.commit], 1, (_, found) =>
      seen.push(found?.type),
    );
    expect(seen).toEqual(['commit', undefined, 'commit']);
    // An object over the limit fails the whole read, and nothing after it is handed over.
    const after: string[] = [];
    const error = await failure(reader.readEach([bomb.blob, bomb.commit], 2, (oid) => after.push(oid)));
    expect(error.code).toBe('source-too-large');
    expect(after).toEqual([]);
    await reader.close();
    expect(catFileReader('git', bomb.gitdir).headers).toBeUndefined();
  });

  it('answers the other reads of a reader whose process went for an object over the limit', async () => {
    const bomb = await bombRepo();
    const reader = catFileReader('git', bomb.gitdir, undefined, true);
    // The stream asks for its third object as the first is answered, just before git names the bomb.
    const stream = reader.readEach([bomb.commit, bomb.blob, bomb.commit], 2, () => undefined);
    const other = reader.read(bomb.commit);
    expect((await failure(stream)).code).toBe('source-too-large');
    expect((await other)?.type).toBe('commit');
    await reader.close();
  });
});
