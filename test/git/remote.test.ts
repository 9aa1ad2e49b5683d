import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GitSettings } from '../../src/config/index.ts';
import {
  type FetchProgress,
  fetchCommit,
  GitError,
  openStore,
  pinRef,
  type Remote,
  readBlob,
  resolveRemoteRef,
  walkCommit,
} from '../../src/git/index.ts';
import { BACKENDS, withEnv } from '../helpers/backends.ts';
import { fixture } from '../helpers/fixtures.ts';
import { startForwardProxy } from '../helpers/forwardProxy.ts';
import { type GitHttpServer, startGitHttpServer } from '../helpers/gitHttpServer.ts';
import { sshShim } from '../helpers/sshShim.ts';

const catalog = fixture('catalog');
const c1 = catalog.commits['c1']!;
const c2 = catalog.commits['c2']!;

/**
 * A served root holding `catalog.git`, and `hidden.git`: the same history with tag v1 deleted (c1 is reachable
 * but not advertised) plus a dangling commit that no ref reaches.
 */
function buildServedRoot(): { root: string; dangling: string } {
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
let served: { root: string; dangling: string } | undefined;
/** The served root, built once for the file: every test only reads it. */
const servedRoot = () => {
  served ??= buildServedRoot();
  return served;
};

async function codeOf(call: Promise<unknown>): Promise<{ code: string; message: string }> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(GitError);
  return { code: (error as GitError).code, message: (error as GitError).message };
}

const has = (gitdir: string, oid: string) =>
  spawnSync('git', ['--git-dir', gitdir, 'cat-file', '-e', oid]).status === 0;
const blobOf = (commit: string, file: string) =>
  execFileSync('git', ['--git-dir', catalog.gitdir, 'rev-parse', `${commit}:${file}`], {
    encoding: 'utf8',
  }).trim();

describe.each(BACKENDS)('remote repositories, $name backend', ({ name, settings }) => {
  const freshStore = (git: GitSettings = settings) =>
    openStore(path.join(mkdtempSync(path.join(tmpdir(), 'skillpin-store-')), 'repo.git'), git);

  describe('over smart HTTP (loopback)', () => {
    let root: string;
    let dangling: string;
    let open: GitHttpServer;
    let strict: GitHttpServer;
    beforeAll(async () => {
      ({ root, dangling } = servedRoot());
      open = await startGitHttpServer({
        root,
        config: { 'uploadpack.allowAnySHA1InWant': 'true', 'uploadpack.allowFilter': 'true' },
      });
      strict = await startGitHttpServer({ root });
    });
    afterAll(async () => {
      await open.close();
      await strict.close();
    });

    it('resolves branches, tags (annotated ones peeled) and HEAD exactly', async () => {
      const repo = await freshStore();
      const remote = { url: open.urlFor('catalog.git') };
      expect(await resolveRemoteRef(repo, remote, 'main')).toBe(c2);
      expect(await resolveRemoteRef(repo, remote, 'HEAD')).toBe(c2);
      expect(await resolveRemoteRef(repo, remote, 'v1')).toBe(c1);
      expect(await resolveRemoteRef(repo, remote, 'v2')).toBe(c2);
      expect(await resolveRemoteRef(repo, remote, 'refs/tags/v2')).toBe(c2);
      expect((await codeOf(resolveRemoteRef(repo, remote, 'mai'))).code).toBe('source-ref-not-found');
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
      expect(has(repo.gitdir, c2)).toBe(false);
    });

    it('fetches an unreachable commit from a server that allows any want', async () => {
      const repo = await freshStore();
      await fetchCommit(repo, { url: open.urlFor('hidden.git') }, dangling);
      expect((await walkCommit(repo, dangling)).entries.length).toBe(19);
    });

    it(`${name === 'cli' ? 'gets an unreachable commit from a protocol v2 server, which serves any object it holds' : 'reports a commit the server refuses to send, although isomorphic-git reports success'}`, async () => {
      const repo = await freshStore();
      const fetching = fetchCommit(repo, { url: strict.urlFor('hidden.git') }, dangling);
      if (name === 'cli') {
        await fetching;
        expect((await walkCommit(repo, dangling)).entries.length).toBe(19);
        return;
      }
      expect((await codeOf(fetching)).code).toBe('source-commit-not-found');
      expect(existsSync(path.join(repo.gitdir, 'refs', 'skillpin'))).toBe(false);
    });

    it('reports a commit that does not exist', async () => {
      const repo = await freshStore();
      const url = open.urlFor('catalog.git');
      const error = await codeOf(fetchCommit(repo, { url }, 'f'.repeat(40)));
      // The same sentence under both backends.
      expect([error.code, error.message]).toEqual([
        'source-commit-not-found',
        `fetching ${'f'.repeat(40)} from ${url}: the remote does not have the commit, or will not serve it`,
      ]);
    });

    it('reports a repository that is not there', async () => {
      const repo = await freshStore();
      const error = await codeOf(resolveRemoteRef(repo, { url: open.urlFor('missing.git') }, 'main'));
      expect(error.code).toBe('source-repository-not-found');
    });

    it(`fetches ${name === 'cli' ? 'only the blobs under `paths`' : 'the whole snapshot (no partial clone)'} for a source with paths`, async () => {
      const repo = await freshStore();
      const outside = blobOf(c2, 'README.md');
      const inside = blobOf(c2, 'skills/pdf-forms/SKILL.md');
      await fetchCommit(repo, { url: open.urlFor('catalog.git') }, c2, { paths: ['skills'] });
      expect(has(repo.gitdir, inside)).toBe(true);
      expect(has(repo.gitdir, outside)).toBe(name !== 'cli');
      // The tree is whole: every entry is listed, and every blob a skill serves reads.
      const tree = await walkCommit(repo, c2);
      expect(tree.entries.length).toBe(19);
      for (const entry of tree.entries.filter((e) => e.path.startsWith('skills/') && e.type === 'file'))
        expect((await readBlob(repo, entry.id)).byteLength).toBeGreaterThan(0);
    });

    it('reports progress: objects received out of the total', async () => {
      const repo = await freshStore();
      const seen: FetchProgress[] = [];
      await fetchCommit(repo, { url: open.urlFor('catalog.git') }, c2, { onProgress: (p) => seen.push(p) });
      const received = seen.filter((p) => p.phase === 'Receiving objects');
      expect(received.at(-1)).toMatchObject({ loaded: received.at(-1)!.total });
      expect(received.at(-1)!.total).toBeGreaterThan(0);
      if (name === 'cli') expect(received.at(-1)!.bytes).toBeGreaterThan(0);
    });

    it('goes through git.proxy, and through HTTP_PROXY from the environment', async () => {
      const proxy = await startForwardProxy();
      try {
        const repo = await freshStore({ ...settings, proxy: proxy.url });
        await fetchCommit(repo, { url: open.urlFor('catalog.git') }, c2);
        expect(proxy.seen).toContain(`GET ${open.urlFor('catalog.git')}/info/refs?service=git-upload-pack`);
        const before = proxy.seen.length;
        await withEnv(
          { http_proxy: proxy.url, HTTP_PROXY: proxy.url, NO_PROXY: '', no_proxy: '' },
          async () => resolveRemoteRef(await freshStore(), { url: open.urlFor('catalog.git') }, 'main'),
        );
        expect(proxy.seen.slice(before)).toContain(
          `GET ${open.urlFor('catalog.git')}/info/refs?service=git-upload-pack`,
        );
      } finally {
        await proxy.close();
      }
    });
  });

  describe('credentials', () => {
    const token = 'tok-3f9a1c77d2';
    let server: GitHttpServer;
    let url: string;
    beforeAll(async () => {
      server = await startGitHttpServer({
        root: servedRoot().root,
        config: { 'uploadpack.allowAnySHA1InWant': 'true' },
        auth: { username: 'x-access-token', password: token },
      });
      url = server.urlFor('catalog.git');
    });
    afterAll(async () => server.close());

    it('sends the token as the basic-auth password, never in argv or the store', async () => {
      // A `git` first on PATH that logs its arguments, then runs the real one.
      const bin = mkdtempSync(path.join(tmpdir(), 'skillpin-bin-'));
      const argv = path.join(bin, 'argv.log');
      const real = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
      writeFileSync(path.join(bin, 'git'), `#!/bin/sh\necho "$*" >> '${argv}'\nexec '${real}' "$@"\n`, {
        mode: 0o755,
      });
      await withEnv({ PATH: `${bin}:${process.env['PATH']}` }, async () => {
        const repo = await freshStore();
        await fetchCommit(repo, { url, token }, c2);
        expect((await walkCommit(repo, c2)).entries.length).toBe(19);
        await repo.close();
      });
      if (name === 'cli') expect(readFileSync(argv, 'utf8')).toContain('fetch');
      expect(existsSync(argv) ? readFileSync(argv, 'utf8') : '').not.toContain(token);
      // grep exits 1 when no file under the folder holds the token.
      expect(spawnSync('grep', ['-r', '-l', '--binary-files=text', token, bin]).status).toBe(1);
    });

    it('reports a refused token without echoing it', async () => {
      const repo = await freshStore();
      const error = await codeOf(resolveRemoteRef(repo, { url, token: 'wrong-token-value' }, 'main'));
      expect(error.code).toBe('source-auth-failed');
      expect(error.message).not.toContain('wrong-token-value');
      const missing = await codeOf(resolveRemoteRef(repo, { url }, 'main'));
      expect(missing.code).toBe('source-auth-failed');
    });

    it(`${name === 'cli' ? 'asks a git credential helper' : 'refuses a credential helper (source-unsupported)'}`, async () => {
      const file = path.join(mkdtempSync(path.join(tmpdir(), 'skillpin-cred-')), 'credentials');
      writeFileSync(file, `${new URL(url).protocol}//x-access-token:${token}@${new URL(url).host}\n`);
      const remote: Remote = { url, credentialHelper: `store --file ${file}` };
      const repo = await freshStore();
      if (name === 'isomorphic') {
        expect((await codeOf(resolveRemoteRef(repo, remote, 'main'))).code).toBe('source-unsupported');
        return;
      }
      expect(await resolveRemoteRef(repo, remote, 'main')).toBe(c2);
      await fetchCommit(repo, remote, c2);
      expect((await walkCommit(repo, c2)).entries.length).toBe(19);
      writeFileSync(file, `${new URL(url).protocol}//x-access-token:wrong@${new URL(url).host}\n`);
      expect((await codeOf(resolveRemoteRef(repo, remote, 'main'))).code).toBe('source-auth-failed');
    });
  });

  describe('over SSH (a stand-in ssh that runs git-upload-pack locally)', () => {
    let root: string;
    let dangling: string;
    let shim: ReturnType<typeof sshShim>;
    beforeAll(() => {
      ({ root, dangling } = servedRoot());
      shim = sshShim();
    });
    const bare = () => path.join(root, 'catalog.git');
    const forms = () => [`git@repo.example:${bare()}`, `ssh://git@repo.example:2222${bare()}`];

    it(`${name === 'cli' ? 'resolves and fetches' : 'refuses (source-unsupported)'} ssh:// and user@host:path remotes`, async () => {
      await withEnv({ GIT_SSH_COMMAND: shim.command }, async () => {
        for (const url of forms()) {
          const repo = await freshStore();
          if (name === 'isomorphic') {
            expect((await codeOf(resolveRemoteRef(repo, { url }, 'main'))).code).toBe('source-unsupported');
            continue;
          }
          expect(await resolveRemoteRef(repo, { url }, 'v1')).toBe(c1);
          await fetchCommit(repo, { url }, c2, { paths: ['skills'] });
          expect((await walkCommit(repo, c2)).entries.length).toBe(19);
          await repo.close();
        }
      });
      if (name === 'cli')
        expect(new Set(readFileSync(shim.log, 'utf8').trim().split('\n'))).toEqual(
          new Set(['git@repo.example port=22', 'git@repo.example port=2222']),
        );
    });

    // The isomorphic backend refuses ssh remotes (above): these two are the cli backend's alone.
    it.skipIf(name === 'isomorphic')(
      'reports a commit that a protocol v0 server (no GIT_PROTOCOL over ssh) refuses to send',
      async () => {
        // Many sshd configurations do not accept GIT_PROTOCOL: the server then speaks v0 and refuses unadvertised wants.
        const v0 = path.join(mkdtempSync(path.join(tmpdir(), 'skillpin-ssh-')), 'ssh');
        writeFileSync(v0, `#!/bin/sh\nunset GIT_PROTOCOL\nexec '${shim.command}' "$@"\n`, { mode: 0o755 });
        await withEnv({ GIT_SSH_COMMAND: v0 }, async () => {
          const repo = await freshStore();
          const url = `git@repo.example:${path.join(root, 'hidden.git')}`;
          expect((await codeOf(fetchCommit(repo, { url }, dangling))).code).toBe('source-commit-not-found');
          expect(existsSync(path.join(repo.gitdir, 'refs', 'skillpin'))).toBe(false);
        });
      },
    );

    it.skipIf(name === 'isomorphic')(
      'reports a host that refuses the key as source-auth-failed',
      async () => {
        const refusing = path.join(mkdtempSync(path.join(tmpdir(), 'skillpin-ssh-')), 'ssh');
        writeFileSync(
          refusing,
          '#!/bin/sh\n[ "$1" = -G ] && exit 0\necho "git@repo.example: Permission denied (publickey)." >&2\nexit 255\n',
          { mode: 0o755 },
        );
        await withEnv({ GIT_SSH_COMMAND: refusing }, async () => {
          const repo = await freshStore();
          const error = await codeOf(resolveRemoteRef(repo, { url: forms()[0]! }, 'main'));
          expect(error.code).toBe('source-auth-failed');
        });
      },
    );
  });
});
