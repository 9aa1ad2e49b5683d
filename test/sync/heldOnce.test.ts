import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createCatalog, type Catalog, type Namespace } from '../../src/catalog/index.ts';
import { loadConfig, type Config } from '../../src/config/index.ts';
import { indexStore } from '../../src/index/index.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import { createSyncWorker, type SyncWorker } from '../../src/sync/worker.ts';
import { BACKENDS, withEnv } from '../helpers/backends.ts';
import { fixture } from '../helpers/fixtures.ts';
import { git } from '../helpers/git.ts';
import { type GitHttpServer, startGitHttpServer } from '../helpers/gitHttpServer.ts';
import { makeRepo } from '../helpers/repo.ts';
import { modernRequest, writeConfig } from '../helpers/server.ts';
import { type InProcessServer, serveInProcess } from '../helpers/serving.ts';
import { makeSigningKeys, signingRepo, skill } from '../helpers/signing.ts';
import { tempDir } from '../helpers/temp.ts';

const catalog = fixture('catalog');
const c2 = catalog.commits['c2']!;
const versions = () => fixture('versions');
const V = (id: 'c1' | 'c2' | 'c3') => versions().commits[id]!;

/**
 * A worker whose index stores count the indexes built (each build saves its index file once), and the index and
 * search files read, by source dir.
 */
function countingWorker(config: Config) {
  const built: string[] = [];
  const read: string[] = [];
  const cat = createCatalog();
  const worker = createSyncWorker({
    config,
    catalog: cat,
    logger: silentLogger(),
    indexStore: (dir) => {
      const store = indexStore(dir);
      return {
        ...store,
        save: (index, options) => {
          built.push(`${path.basename(dir)} ${index.commit}`);
          return store.save(index, options);
        },
        load: (commit, options) => {
          read.push(`${path.basename(dir)} ${commit}.json`);
          return store.load(commit, options);
        },
        loadSearch: (index, options) => {
          read.push(`${path.basename(dir)} ${index.commit}.search`);
          return store.loadSearch(index, options);
        },
      };
    },
  });
  return { worker, catalog: cat, built, read };
}

const nsOf = (cat: Catalog, id: string): Namespace => cat.state.sources.find((s) => s.id === id)!.current;
const indexFile = (config: Config, id: string, commit: string) =>
  path.join(config.dataDir, 'index', id, `${commit}.json`);
const inode = (file: string) => statSync(file).ino;

let running: SyncWorker[] = [];
afterEach(async () => {
  for (const worker of running.splice(0)) await worker.stop();
});
const started = <T extends { worker: SyncWorker }>(made: T): T => {
  running.push(made.worker);
  return made;
};

describe('one repository and commit under two source ids', () => {
  it('is indexed once and held once; each source serves it under its own id with its own index file', async () => {
    const config = loadConfig(
      writeConfig({
        sources: [
          { id: 'one', path: catalog.gitdir, commit: c2, paths: ['skills'] },
          { id: 'two', path: catalog.gitdir, commit: c2, paths: ['skills'] },
          { id: 'wide', path: catalog.gitdir, commit: c2 },
        ],
      }),
    );
    const { worker, catalog: cat, built } = started(countingWorker(config));
    await worker.restore();
    await worker.syncAll('start');
    // `wide` indexes the whole tree, not `skills` alone: another index.
    expect(built.sort()).toEqual([`one ${c2}`, `wide ${c2}`].sort());
    const [one, two, wide] = ['one', 'two', 'wide'].map((id) => nsOf(cat, id));
    expect(two!.skills).toBe(one!.skills);
    expect(two!.problems).toBe(one!.problems);
    expect(wide!.skills).not.toBe(one!.skills);
    expect([one!.source, two!.source, two!.commit]).toEqual(['one', 'two', c2]);
    expect(await two!.searchData!()).toBe(await one!.searchData!());
    // Each source names the one file on disk: its retention removes its own name only.
    expect(inode(indexFile(config, 'two', c2))).toBe(inode(indexFile(config, 'one', c2)));
    expect(inode(indexFile(config, 'wide', c2))).not.toBe(inode(indexFile(config, 'one', c2)));
  });

  it("keeps what one source serves when the other's retention forgets it, and restores it after a restart", async () => {
    const repo = makeRepo({ 'alpha/SKILL.md': '---\nname: alpha\ndescription: one\n---\none\n' });
    const first = repo.commit;
    const config = loadConfig(
      writeConfig({
        sources: [
          { id: 'moving', path: repo.dir, ref: 'main', keep: 0 },
          { id: 'pinned', path: repo.dir, commit: first },
        ],
      }),
    );
    const before = started(countingWorker(config));
    await before.worker.restore();
    await before.worker.syncAll('start');
    // Whichever source asked first built it; the other did not.
    expect(before.built.map((b) => b.split(' ')[1])).toEqual([first]);
    writeFileSync(path.join(repo.dir, 'alpha', 'SKILL.md'), '---\nname: alpha\ndescription: two\n---\ntwo\n');
    git(['-C', repo.dir, 'commit', '--quiet', '-am', 'two']);
    const second = git(['-C', repo.dir, 'rev-parse', 'HEAD']);
    expect(await before.worker.trigger('moving', 'test')).toMatchObject({ ok: true, commit: second });
    // keep: 0 forgot `moving`'s name of the first commit's index; `pinned` serves it on, from its own file.
    expect([
      existsSync(indexFile(config, 'moving', first)),
      existsSync(indexFile(config, 'pinned', first)),
    ]).toEqual([false, true]);
    const pinned = nsOf(before.catalog, 'pinned');
    const skillMd = pinned.skills[0]!.files.find((file) => file.path === 'alpha/SKILL.md')!;
    expect(Buffer.from(await pinned.readBlob(skillMd.blob)).toString('utf8')).toContain('description: one');
    await before.worker.stop();
    running = [];

    const after = started(countingWorker(config));
    await after.worker.restore();
    expect(after.built).toEqual([]);
    expect([nsOf(after.catalog, 'pinned').commit, nsOf(after.catalog, 'moving').commit]).toEqual([
      first,
      second,
    ]);
    expect(nsOf(after.catalog, 'pinned').skills).toEqual(pinned.skills);
  });
});

describe('sources of one local repository on one commit, asked to sync at once (cli backend)', () => {
  it('after a restart, read its index and search files once, resolve its ref and check the commit once; a sync asked later runs its own', async () => {
    const repo = makeRepo({ 'alpha/SKILL.md': '---\nname: alpha\ndescription: one\n---\none\n' });
    const ids = ['one', 'two', 'three'];
    const config = loadConfig(
      writeConfig({
        git: { backend: 'cli' },
        sources: ids.map((id) => ({ id, path: repo.dir, ref: 'main' })),
      }),
    );
    const first = started(countingWorker(config));
    await first.worker.restore();
    await first.worker.syncAll('start');
    // Its search index built and saved beside the index file, as serving does.
    await nsOf(first.catalog, 'one').searchData!();
    await first.worker.stop();
    running = [];
    // A `git` first on PATH that logs its arguments, then runs the real one.
    const bin = tempDir('skillpin-bin-');
    const argv = path.join(bin, 'argv.log');
    const real = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
    writeFileSync(path.join(bin, 'git'), `#!/bin/sh\necho "$*" >> '${argv}'\nexec '${real}' "$@"\n`, {
      mode: 0o755,
    });
    const ran = (what: string) =>
      (existsSync(argv) ? readFileSync(argv, 'utf8') : '').split('\n').filter((line) => line.includes(what));
    await withEnv({ PATH: `${bin}:${process.env['PATH']}` }, async () => {
      const restarted = started(countingWorker(config));
      await restarted.worker.restore();
      const outcomes = await restarted.worker.syncAll('start');
      expect(outcomes.map((o) => (o.ok ? [o.id, o.commit, o.changed] : [o.id, o.reason])).sort()).toEqual(
        ids.map((id) => [id, repo.commit, false]).sort(),
      );
      // One index file and one search file read for the three sources, whichever source came first.
      const namespaces = ids.map((id) => nsOf(restarted.catalog, id));
      const searches = await Promise.all(namespaces.map((ns) => ns.searchData!()));
      expect(restarted.read.map((r) => r.split(' ')[1])).toEqual([
        `${repo.commit}.json`,
        `${repo.commit}.search`,
      ]);
      expect(new Set(namespaces.map((ns) => ns.skills)).size).toBe(1);
      expect(new Set(searches).size).toBe(1);
      expect(restarted.built).toEqual([]);
      // `main` is looked up as a branch and as a tag by one for-each-ref, once for the three sources.
      expect([ran('for-each-ref').length, ran('cat-file --batch-check').length]).toEqual([1, 1]);
      await restarted.worker.trigger('two', 'test');
      expect([ran('for-each-ref').length, ran('cat-file --batch-check').length]).toEqual([2, 2]);
    });
  });
});

describe.each(BACKENDS)('a refs: source with two tags on one commit ($name backend)', ({ name }) => {
  let root: string;
  let remote: GitHttpServer;

  beforeAll(async () => {
    root = tempDir('skillpin-held-refs-');
    cpSync(versions().gitdir, path.join(root, 'policies.git'), { recursive: true });
    git(['--git-dir', path.join(root, 'policies.git'), 'update-ref', 'refs/tags/v2.0.1', V('c3')]);
    remote = await startGitHttpServer({ root });
  });
  afterAll(() => remote.close());

  it('fetches and indexes that commit once; each tag serves it with its own ref', async () => {
    const config = loadConfig(
      writeConfig({
        git: { backend: name },
        sources: [{ id: 'policies', url: remote.urlFor('policies.git'), refs: ['refs/tags/v*'], poll: '1h' }],
      }),
    );
    const { worker, catalog: cat, built } = started(countingWorker(config));
    await worker.restore();
    await worker.syncAll('start');
    expect(cat.state.sources.map((s) => [s.id, s.current.commit])).toEqual([
      ['policies.v2.0.1', V('c3')],
      ['policies.v2.0.0', V('c3')],
      ['policies.v1.1.0', V('c2')],
      ['policies.v1.0.0', V('c1')],
    ]);
    // One fetch and one index per distinct commit.
    expect(remote.requests.filter((r) => r.fetch).length).toBe(3);
    expect(built.map((b) => b.split(' ')[1]).sort()).toEqual([V('c1'), V('c2'), V('c3')].sort());
    const [newer, older] = [nsOf(cat, 'policies.v2.0.1'), nsOf(cat, 'policies.v2.0.0')];
    expect(older.skills).toBe(newer.skills);
    expect([newer.origin.ref, older.origin.ref]).toEqual(['refs/tags/v2.0.1', 'refs/tags/v2.0.0']);
  });
});

describe('a caller allowed one of two sources serving one commit', () => {
  const TOKENS = { ci: 'ci-token-0123456789abcdef', admin: 'admin-token-0123456789abcdef' };
  let server: InProcessServer;

  beforeAll(async () => {
    const file = writeConfig({
      sources: [
        { id: 'one', path: catalog.gitdir, commit: c2, paths: ['skills'] },
        { id: 'two', path: catalog.gitdir, commit: c2, paths: ['skills'] },
      ],
      auth: {
        tokens: [
          { name: 'ci', token: '${HELD_CI_TOKEN}', sources: ['one'] },
          { name: 'admin', token: '${HELD_ADMIN_TOKEN}' },
        ],
      },
    });
    server = await serveInProcess(file, {
      env: { HELD_CI_TOKEN: TOKENS.ci, HELD_ADMIN_TOKEN: TOKENS.admin },
    });
    await server.serving.sync('one');
    await server.serving.sync('two');
  });
  afterAll(() => server.stop());

  const call = async (method: string, params: Record<string, unknown>, token: string) =>
    (await (await fetch(modernRequest(method, params, { url: server.url, token }))).json()) as {
      result?: Record<string, unknown>;
      error?: { code: number; message: string };
    };
  const listed = async (token: string) =>
    ((await call('skills/list', {}, token)).result!['skills'] as Array<{ uri: string }>).map((s) =>
      s.uri.split('/').slice(0, 3).join('/'),
    );

  it('sees only that source, and the other answers like an unknown one', async () => {
    expect(new Set(await listed(TOKENS.ci))).toEqual(new Set(['skill://one']));
    expect(new Set(await listed(TOKENS.admin))).toEqual(new Set(['skill://one', 'skill://two']));
    const uri = (id: string) => `skill://${id}/${c2}/skills/pdf-forms/SKILL.md`;
    const hidden = await call('skills/get', { uri: uri('two') }, TOKENS.ci);
    const unknown = await call('skills/get', { uri: uri('nosuch') }, TOKENS.ci);
    expect(hidden.error).toEqual(JSON.parse(JSON.stringify(unknown.error).replaceAll('nosuch', 'two')));
    expect(hidden.error!.code).toBe(-32602);
    const seen = await call('skills/get', { uri: uri('two') }, TOKENS.admin);
    expect((seen.result!['skill'] as { uri: string }).uri).toBe(uri('two'));
  });
});

describe('a signed tag held for one source and reached under another name by another', () => {
  let root: string;
  let server: GitHttpServer;
  beforeAll(async () => {
    root = tempDir('skillpin-held-tag-');
    server = await startGitHttpServer({ root });
  });
  afterAll(() => server.close());

  it('is verified again for the other source, and refused there: a signed tag serves only under its own name', async () => {
    const keys = makeSigningKeys();
    const repo = signingRepo(keys);
    const commit = repo.commit({ 'skills/t/SKILL.md': skill('t') });
    const tag = repo.tag('v1', commit, { ssh: 'ecdsa' });
    repo.git(['update-ref', 'refs/tags/release', tag]);
    const bare = path.join(root, 'signed.git');
    git(['init', '--quiet', '--bare', '--initial-branch=main', bare]);
    git(['--git-dir', bare, 'fetch', '--quiet', '--force', repo.dir, '+refs/*:refs/*']);
    const verify = { sshAllowedSigners: keys.allowedSigners, require: 'tag' };
    const url = server.urlFor('signed.git');
    const config = loadConfig(
      writeConfig({
        sources: [
          { id: 'v1', url, ref: 'v1', verify },
          { id: 'release', url, ref: 'release', verify },
        ],
      }),
    );
    const { worker, catalog: cat } = started(countingWorker(config));
    await worker.restore();
    expect(await worker.syncAll('test', (s) => s.id === 'v1')).toEqual([
      { id: 'v1', ok: true, commit, changed: true },
    ]);
    expect(await worker.syncAll('test', (s) => s.id === 'release')).toEqual([
      {
        id: 'release',
        ok: false,
        reason: 'source-signature-invalid',
        detail: `tag ${tag} is signed as "v1", and was reached through refs/tags/release: a signed tag serves only under its own name`,
      },
    ]);
    expect(cat.state.sources.map((s) => s.id)).toEqual(['v1']);
    expect(existsSync(indexFile(config, 'release', commit))).toBe(false);
  });
});
