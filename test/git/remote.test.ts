import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  fetchCommit,
  GitError,
  openStore,
  pinRef,
  resolveRemoteRef,
  walkCommit,
} from '../../src/git/index.ts';
import { fixture } from '../helpers/fixtures.ts';
import { startGitHttpServer, type GitHttpServer } from '../helpers/gitHttpServer.ts';

const catalog = fixture('catalog');
const c1 = catalog.commits['c1']!;
const c2 = catalog.commits['c2']!;

/**
 * A served root holding `catalog.git`, and `hidden.git`: the same history with tag v1 deleted (c1 is reachable
 * but not advertised) plus a dangling commit that no ref reaches.
 */
function servedRoot(): { root: string; dangling: string } {
  const root = mkdtempSync(path.join(tmpdir(), 'skillpin-remote-'));
  const hidden = path.join(root, 'hidden.git');
  execFileSync('git', ['clone', '--quiet', '--bare', catalog.gitdir, path.join(root, 'catalog.git')]);
  execFileSync('git', ['clone', '--quiet', '--bare', catalog.gitdir, hidden]);
  execFileSync('git', ['--git-dir', hidden, 'tag', '-d', 'v1'], { stdio: 'ignore' });
  const env = {
    ...process.env,
    GIT_AUTHOR_NAME: 't',
    GIT_AUTHOR_EMAIL: 't@t',
    GIT_COMMITTER_NAME: 't',
    GIT_COMMITTER_EMAIL: 't@t',
  };
  const dangling = execFileSync(
    'git',
    ['--git-dir', hidden, 'commit-tree', `${c2}^{tree}`, '-m', 'dangling'],
    { encoding: 'utf8', env },
  ).trim();
  return { root, dangling };
}

async function codeOf(call: Promise<unknown>): Promise<{ code: string; message: string }> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(GitError);
  return { code: (error as GitError).code, message: (error as GitError).message };
}

const freshStore = () =>
  openStore(path.join(mkdtempSync(path.join(tmpdir(), 'skillpin-store-')), 'repo.git'));

describe('remote repositories over smart HTTP (loopback)', () => {
  let root: string;
  let dangling: string;
  let open: GitHttpServer;
  let strict: GitHttpServer;
  beforeAll(async () => {
    ({ root, dangling } = servedRoot());
    open = await startGitHttpServer({ root, config: { 'uploadpack.allowAnySHA1InWant': 'true' } });
    strict = await startGitHttpServer({ root });
  });
  afterAll(async () => {
    await open.close();
    await strict.close();
  });

  it('resolves branches, tags (annotated ones peeled) and HEAD exactly', async () => {
    const remote = { url: open.urlFor('catalog.git') };
    expect(await resolveRemoteRef(remote, 'main')).toBe(c2);
    expect(await resolveRemoteRef(remote, 'HEAD')).toBe(c2);
    expect(await resolveRemoteRef(remote, 'v1')).toBe(c1);
    expect(await resolveRemoteRef(remote, 'v2')).toBe(c2);
    expect(await resolveRemoteRef(remote, 'refs/tags/v2')).toBe(c2);
    expect((await codeOf(resolveRemoteRef(remote, 'mai'))).code).toBe('source-ref-not-found');
  });

  it('fetches exactly one commit at depth 1 and pins it with a local ref', async () => {
    const repo = await freshStore();
    await fetchCommit(repo, { url: strict.urlFor('hidden.git') }, c1);
    const tree = await walkCommit(repo, c1);
    expect(tree.entries.length).toBe(18);
    expect(readFileSync(path.join(repo.gitdir, 'shallow'), 'utf8').trim()).toBe(c1);
    expect(
      execFileSync('git', ['--git-dir', repo.gitdir, 'rev-parse', pinRef(c1)], { encoding: 'utf8' }).trim(),
    ).toBe(c1);
    expect(spawnSync('git', ['--git-dir', repo.gitdir, 'cat-file', '-e', c2]).status).toBe(1);
  });

  it('fetches an unreachable commit from a server that allows any want', async () => {
    const repo = await freshStore();
    await fetchCommit(repo, { url: open.urlFor('hidden.git') }, dangling);
    expect((await walkCommit(repo, dangling)).entries.length).toBe(19);
  });

  it('reports a commit the server refuses to send, although isomorphic-git reports success', async () => {
    const repo = await freshStore();
    const error = await codeOf(fetchCommit(repo, { url: strict.urlFor('hidden.git') }, dangling));
    expect(error.code).toBe('source-commit-not-found');
    expect(existsSync(path.join(repo.gitdir, 'refs', 'skillpin'))).toBe(false);
  });

  it('reports a commit that does not exist', async () => {
    const repo = await freshStore();
    expect((await codeOf(fetchCommit(repo, { url: open.urlFor('catalog.git') }, 'f'.repeat(40)))).code).toBe(
      'source-commit-not-found',
    );
  });

  it('reports a repository that is not there', async () => {
    const error = await codeOf(resolveRemoteRef({ url: open.urlFor('missing.git') }, 'main'));
    expect(error.code).toBe('source-repository-not-found');
  });
});

describe('credentials', () => {
  const token = 'tok-3f9a1c77d2';
  let root: string;
  let server: GitHttpServer;
  beforeAll(async () => {
    ({ root } = servedRoot());
    server = await startGitHttpServer({
      root,
      config: { 'uploadpack.allowAnySHA1InWant': 'true' },
      auth: { username: 'x-access-token', password: token },
    });
  });
  afterAll(async () => server.close());

  it('sends the token as the basic-auth password', async () => {
    const repo = await freshStore();
    await fetchCommit(repo, { url: server.urlFor('catalog.git'), token }, c2);
    expect((await walkCommit(repo, c2)).entries.length).toBe(19);
    // grep exits 1 when no file under the store holds the token.
    expect(spawnSync('grep', ['-r', '-l', '--binary-files=text', token, repo.gitdir]).status).toBe(1);
  });

  it('reports a refused token without echoing it', async () => {
    const error = await codeOf(
      resolveRemoteRef({ url: server.urlFor('catalog.git'), token: 'wrong-token-value' }, 'main'),
    );
    expect(error.code).toBe('source-auth-failed');
    expect(error.message).not.toContain('wrong-token-value');
    const missing = await codeOf(resolveRemoteRef({ url: server.urlFor('catalog.git') }, 'main'));
    expect(missing.code).toBe('source-auth-failed');
  });
});
