import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import git from 'isomorphic-git';
import type { FetchResult } from 'isomorphic-git';
import http from 'isomorphic-git/http/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGitHttpServer } from './gitHttpServer.ts';
import type { GitHttpServer } from './gitHttpServer.ts';

const execFileP = promisify(execFile);

let tmp: string;
let root: string;
/** First commit: reachable from main but not a ref tip (not advertised). */
let firstCommit: string;
/** Second commit: the tip of refs/heads/main. */
let tipCommit: string;
/** A commit present in the served repo's object store but reachable from no ref (its branch was deleted). */
let danglingCommit: string;

function gitEnv(): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: tmp,
    XDG_CONFIG_HOME: tmp,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: path.join(tmp, 'no-gitconfig'),
    GIT_TERMINAL_PROMPT: '0',
    GIT_ASKPASS: '',
    GIT_AUTHOR_NAME: 'Test',
    GIT_AUTHOR_EMAIL: 'test@example.invalid',
    GIT_COMMITTER_NAME: 'Test',
    GIT_COMMITTER_EMAIL: 'test@example.invalid',
    GIT_AUTHOR_DATE: '2025-01-01T00:00:00Z',
    GIT_COMMITTER_DATE: '2025-01-01T00:00:00Z',
    LC_ALL: 'C',
  };
}

async function runGit(args: string[], cwd?: string): Promise<string> {
  const { stdout } = await execFileP('git', args, { cwd: cwd ?? tmp, env: gitEnv() });
  return stdout;
}

async function runGitFailing(args: string[]): Promise<{ code: number; stderr: string }> {
  try {
    await execFileP('git', args, { cwd: tmp, env: gitEnv() });
  } catch (err) {
    const e = err as { code?: number; stderr?: string };
    return { code: e.code ?? -1, stderr: e.stderr ?? '' };
  }
  throw new Error(`git ${args.join(' ')} unexpectedly succeeded`);
}

/**
 * A fresh bare repo with an `origin` remote. isomorphic-git's fetch needs a fetch refspec for the
 * remote it updates (default "origin"): without one it throws NoRefspecError before the pack is
 * written, even when `url` is passed (see the test below).
 */
async function freshBareRepo(name: string, url?: string): Promise<string> {
  const gitdir = path.join(tmp, name);
  await git.init({ fs, gitdir, bare: true });
  if (url) await git.addRemote({ fs, gitdir, remote: 'origin', url });
  return gitdir;
}

const pkt = (s: string): string => (s.length + 4).toString(16).padStart(4, '0') + s;

/** isomorphic-git also returns the written pack's path (undocumented in its types). */
type FetchResultWithPack = FetchResult & { packfile?: string };

/** The fetch shape skillpin uses: one exact commit, single branch, depth 1, no tags. */
function isoFetchSha(
  gitdir: string,
  url: string,
  oid: string,
  onMessage?: (message: string) => void,
): Promise<FetchResultWithPack> {
  return git.fetch({
    fs,
    http,
    gitdir,
    url,
    ref: oid,
    singleBranch: true,
    depth: 1,
    tags: false,
    ...(onMessage ? { onMessage } : {}),
  });
}

async function hasCommit(gitdir: string, oid: string): Promise<boolean> {
  try {
    await git.readCommit({ fs, gitdir, oid });
    return true;
  } catch {
    return false;
  }
}

beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'git-http-test-'));
  root = path.join(tmp, 'srv');
  const work = path.join(tmp, 'work');
  await runGit(['init', '-q', '-b', 'main', work]);
  await fs.promises.mkdir(path.join(work, 'hello'), { recursive: true });
  await writeFile(path.join(work, 'hello', 'SKILL.md'), '---\nname: hello\ndescription: Hi.\n---\nv1\n');
  await runGit(['add', '-A'], work);
  await runGit(['commit', '-q', '-m', 'first'], work);
  firstCommit = (await runGit(['rev-parse', 'HEAD'], work)).trim();
  await writeFile(path.join(work, 'hello', 'SKILL.md'), '---\nname: hello\ndescription: Hi.\n---\nv2\n');
  await runGit(['commit', '-q', '-am', 'second'], work);
  tipCommit = (await runGit(['rev-parse', 'HEAD'], work)).trim();
  await runGit(['checkout', '-q', '-b', 'gone'], work);
  await writeFile(path.join(work, 'hello', 'SKILL.md'), '---\nname: hello\ndescription: Hi.\n---\nv3\n');
  await runGit(['commit', '-q', '-am', 'third (on a branch deleted later)'], work);
  danglingCommit = (await runGit(['rev-parse', 'HEAD'], work)).trim();
  await runGit(['checkout', '-q', 'main'], work);
  await fs.promises.mkdir(root, { recursive: true });
  const bare = path.join(root, 'skills.git');
  await runGit(['clone', '-q', '--bare', work, bare]);
  await runGit(['-C', bare, 'update-ref', '-d', 'refs/heads/gone']);
  expect((await runGit(['-C', bare, 'cat-file', '-t', danglingCommit])).trim()).toBe('commit');
});

afterAll(async () => {
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

describe('startGitHttpServer (allowAnySHA1InWant)', () => {
  let srv: GitHttpServer;
  beforeAll(async () => {
    srv = await startGitHttpServer({
      root,
      config: {
        'uploadpack.allowAnySHA1InWant': 'true',
        'uploadpack.allowReachableSHA1InWant': 'true',
      },
    });
  });
  afterAll(async () => {
    await srv.close();
  });

  it('serves on 127.0.0.1 and builds repo URLs', () => {
    expect(srv.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(srv.urlFor('skills.git')).toBe(`${srv.url}/skills.git`);
    expect(srv.urlFor('/a b/c.git')).toBe(`${srv.url}/a%20b/c.git`);
  });

  it('(a) git ls-remote lists the branch and HEAD', async () => {
    const out = await runGit(['ls-remote', srv.urlFor('skills.git')]);
    expect(out).toContain(`${tipCommit}\tHEAD`);
    expect(out).toContain(`${tipCommit}\trefs/heads/main`);
    // git 2.39 speaks protocol v2 by default: GET info/refs then POST git-upload-pack (ls-refs)
    expect(srv.requests).toContainEqual({
      method: 'GET',
      path: '/skills.git/info/refs',
      query: 'service=git-upload-pack',
      status: 200,
      fetch: false,
      lsRefs: false,
    });
    expect(srv.requests).toContainEqual(
      expect.objectContaining({
        method: 'POST',
        path: '/skills.git/git-upload-pack',
        status: 200,
        lsRefs: true,
      }),
    );
  });

  it('(a2) git ls-remote over protocol v0 works too', async () => {
    const out = await runGit(['-c', 'protocol.version=0', 'ls-remote', srv.urlFor('skills.git')]);
    expect(out).toContain(`${tipCommit}\trefs/heads/main`);
  });

  it('(b) git clone works', async () => {
    const dest = path.join(tmp, 'clone-b');
    await runGit(['clone', '-q', srv.urlFor('skills.git'), dest]);
    const text = await readFile(path.join(dest, 'hello', 'SKILL.md'), 'utf8');
    expect(text).toContain('v2');
    expect((await runGit(['rev-parse', 'HEAD'], dest)).trim()).toBe(tipCommit);
  });

  it('answers 404 for a repository that does not exist', async () => {
    const res = await fetch(`${srv.urlFor('nope.git')}/info/refs?service=git-upload-pack`);
    expect(res.status).toBe(404);
    await res.arrayBuffer();
    expect(srv.requests.at(-1)).toMatchObject({ method: 'GET', path: '/nope.git/info/refs', status: 404 });
  });

  it('accepts gzip-encoded POST bodies', async () => {
    // A protocol v0 upload-pack request: want <tip>, flush, done.
    const body = Buffer.from(`${pkt(`want ${tipCommit} ofs-delta\n`)}0000${pkt('done\n')}`);
    const res = await fetch(`${srv.urlFor('skills.git')}/git-upload-pack`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/x-git-upload-pack-request',
        'Content-Encoding': 'gzip',
        Accept: 'application/x-git-upload-pack-result',
      },
      body: gzipSync(body),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/x-git-upload-pack-result');
    const out = Buffer.from(await res.arrayBuffer());
    expect(out.subarray(0, 8).toString('latin1')).toBe('0008NAK\n');
    expect(out.includes(Buffer.from('PACK'))).toBe(true);
  });

  it('serves a real git client whose negotiation POST is gzip-compressed (protocol v0 and v2)', async () => {
    // A client with many local commits sends enough "have" lines (> 1 KiB) that git gzips the POST.
    const src = path.join(tmp, 'gz-src');
    const bare = path.join(root, 'gz.git');
    await runGit(['init', '-q', '-b', 'main', src]);
    await writeFile(path.join(src, 'f'), '0\n');
    await runGit(['add', 'f'], src);
    await runGit(['commit', '-q', '-m', 'c0'], src);
    await runGit(['clone', '-q', '--bare', src, bare]);
    const client = path.join(tmp, 'gz-client');
    await runGit(['clone', '-q', srv.urlFor('gz.git'), client]);
    // Increasing dates: the commit walk then visits the newest local commits first and reaches the
    // common commit late, so negotiation takes several rounds and the later POSTs exceed 1 KiB.
    for (let i = 1; i <= 60; i++) {
      const date = new Date(Date.UTC(2025, 1, 1, 0, i)).toISOString();
      await writeFile(path.join(client, 'f'), `local ${i}\n`);
      await execFileP('git', ['commit', '-q', '-am', `local ${i}`], {
        cwd: client,
        env: { ...gitEnv(), GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date },
      });
    }
    for (const version of ['0', '2']) {
      await writeFile(path.join(src, 'f'), `upstream ${version}\n`);
      await runGit(['commit', '-q', '-am', `upstream ${version}`], src);
      await runGit(['push', '-q', bare, 'main'], src);
      const upstream = (await runGit(['rev-parse', 'HEAD'], src)).trim();
      const { stderr } = await execFileP(
        'git',
        ['-C', client, '-c', `protocol.version=${version}`, 'fetch', srv.urlFor('gz.git'), 'main'],
        { env: { ...gitEnv(), GIT_TRACE_CURL: '1', GIT_TRACE_CURL_NO_DATA: '1' } },
      );
      expect(stderr).toMatch(/Send header: Content-Encoding: gzip/);
      expect((await runGit(['-C', client, 'rev-parse', 'FETCH_HEAD'])).trim()).toBe(upstream);
    }
  });

  it('(c) isomorphic-git getRemoteInfo2 sees the refs (v1) and the v2 capabilities', async () => {
    const v1 = await git.getRemoteInfo2({ http, url: srv.urlFor('skills.git'), protocolVersion: 1 });
    expect(v1.protocolVersion).toBe(1);
    expect(v1.refs).toContainEqual(expect.objectContaining({ ref: 'refs/heads/main', oid: tipCommit }));
    expect(v1.refs).toContainEqual(
      expect.objectContaining({ ref: 'HEAD', oid: tipCommit, target: 'refs/heads/main' }),
    );
    // allowAnySHA1InWant / allowReachableSHA1InWant show up as these v0/v1 capabilities.
    expect(v1.capabilities['allow-tip-sha1-in-want']).toBe(true);
    expect(v1.capabilities['allow-reachable-sha1-in-want']).toBe(true);

    // Default protocolVersion is 2: http-backend honours the Git-Protocol header, so no refs come back.
    const v2 = await git.getRemoteInfo2({ http, url: srv.urlFor('skills.git') });
    expect(v2.protocolVersion).toBe(2);
    expect(v2.refs).toBeUndefined();
    expect(v2.capabilities).toHaveProperty('fetch');
    expect(v2.capabilities).toHaveProperty('ls-refs');
  });

  it('isomorphic-git fetch into a bare repo without a remote refspec throws NoRefspecError and stores nothing', async () => {
    const gitdir = await freshBareRepo('iso-fetch-noremote');
    await expect(
      git.fetch({
        fs,
        http,
        gitdir,
        url: srv.urlFor('skills.git'),
        ref: firstCommit,
        singleBranch: true,
        depth: 1,
        tags: false,
      }),
    ).rejects.toMatchObject({ code: 'NoRefspecError' });
    expect(await hasCommit(gitdir, firstCommit)).toBe(false);
  });

  it('(c) isomorphic-git fetches an exact commit SHA (singleBranch, depth 1) into a fresh bare repo', async () => {
    const gitdir = await freshBareRepo('iso-fetch-any', srv.urlFor('skills.git'));
    const result = await isoFetchSha(gitdir, srv.urlFor('skills.git'), firstCommit);
    expect(result.fetchHead).toBe(firstCommit);
    expect(result.packfile).toMatch(/^objects\/pack\/pack-[0-9a-f]{40}\.pack$/);
    const commit = await git.readCommit({ fs, gitdir, oid: firstCommit });
    expect(commit.commit.message.trim()).toBe('first');
    const blob = await git.readBlob({ fs, gitdir, oid: firstCommit, filepath: 'hello/SKILL.md' });
    expect(Buffer.from(blob.blob).toString('utf8')).toContain('v1');
    // depth 1: the commit is recorded as shallow, and nothing else was downloaded
    expect(await readFile(path.join(gitdir, 'shallow'), 'utf8')).toBe(`${firstCommit}\n`);
    expect(await hasCommit(gitdir, tipCommit)).toBe(false);
  });

  it('(c) with allowAnySHA1InWant even a commit reachable from no ref is served', async () => {
    const gitdir = await freshBareRepo('iso-fetch-any-dangling', srv.urlFor('skills.git'));
    const result = await isoFetchSha(gitdir, srv.urlFor('skills.git'), danglingCommit);
    expect(result.packfile).toBeDefined();
    expect(await hasCommit(gitdir, danglingCommit)).toBe(true);
  });
});

describe('startGitHttpServer (no SHA-in-want config)', () => {
  let srv: GitHttpServer;
  beforeAll(async () => {
    srv = await startGitHttpServer({ root });
  });
  afterAll(async () => {
    await srv.close();
  });

  it('(d) without the setting, the v0/v1 capability list has no allow-*-sha1-in-want', async () => {
    const v1 = await git.getRemoteInfo2({ http, url: srv.urlFor('skills.git'), protocolVersion: 1 });
    expect(v1.capabilities['allow-tip-sha1-in-want']).toBeUndefined();
    expect(v1.capabilities['allow-reachable-sha1-in-want']).toBeUndefined();
  });

  it('(d) a commit reachable from no ref: isomorphic-git fetch RESOLVES, but nothing is stored', async () => {
    // Observed (git 2.39 http-backend, isomorphic-git 1.44.19): upload-pack answers the POST with
    // HTTP 200 and the single pkt-line "ERR upload-pack: not our ref <sha>" and no pack.
    // isomorphic-git ignores that ERR line: git.fetch() resolves with fetchHead = the requested SHA,
    // no `packfile` key, no progress messages; no pack, no shallow file, no ref is written.
    // Callers must check that the commit exists afterwards (git.readCommit) instead of relying on
    // fetch() to throw.
    const gitdir = await freshBareRepo('iso-fetch-none', srv.urlFor('skills.git'));
    const messages: string[] = [];
    const result = await isoFetchSha(gitdir, srv.urlFor('skills.git'), danglingCommit, (m) => {
      messages.push(m);
    });
    expect(result.fetchHead).toBe(danglingCommit);
    expect(result.packfile).toBeUndefined();
    expect(messages).toEqual([]);
    expect(await hasCommit(gitdir, danglingCommit)).toBe(false);
    expect(fs.existsSync(path.join(gitdir, 'shallow'))).toBe(false);
    expect(await fs.promises.readdir(path.join(gitdir, 'objects', 'pack'))).toEqual([]);
    expect(srv.requests.slice(-2)).toEqual([
      {
        method: 'GET',
        path: '/skills.git/info/refs',
        query: 'service=git-upload-pack',
        status: 200,
        fetch: false,
        lsRefs: false,
      },
      {
        method: 'POST',
        path: '/skills.git/git-upload-pack',
        query: '',
        status: 200,
        fetch: true,
        lsRefs: false,
      },
    ]);

    // The same request sent by hand, to pin down what upload-pack says.
    const res = await fetch(`${srv.urlFor('skills.git')}/git-upload-pack`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-git-upload-pack-request' },
      body: `${pkt(`want ${danglingCommit} ofs-delta\n`)}${pkt('deepen 1\n')}0000${pkt('done\n')}`,
    });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(pkt(`ERR upload-pack: not our ref ${danglingCommit}`));
  });

  it('(d) a reachable non-tip commit is served anyway over smart HTTP (stateless-rpc reachability check)', async () => {
    // Over HTTP upload-pack runs --stateless-rpc, where a want that is not a ref tip is accepted if
    // it is reachable from some ref, whatever uploadpack.allow*SHA1InWant say.
    const gitdir = await freshBareRepo('iso-fetch-reachable', srv.urlFor('skills.git'));
    const result = await isoFetchSha(gitdir, srv.urlFor('skills.git'), firstCommit);
    expect(result.packfile).toBeDefined();
    expect(await hasCommit(gitdir, firstCommit)).toBe(true);
  });

  it('(d) the advertised tip SHA is served without any config', async () => {
    const gitdir = await freshBareRepo('iso-fetch-tip', srv.urlFor('skills.git'));
    await isoFetchSha(gitdir, srv.urlFor('skills.git'), tipCommit);
    expect(await hasCommit(gitdir, tipCommit)).toBe(true);
  });

  it('(d) git CLI: v0 refuses an unadvertised SHA client-side; v2 fetches any SHA, even an unreachable one', async () => {
    const v0 = path.join(tmp, 'cli-fetch-v0');
    await runGit(['init', '-q', '--bare', v0]);
    const refused = await runGitFailing([
      '-C',
      v0,
      '-c',
      'protocol.version=0',
      'fetch',
      '--depth=1',
      srv.urlFor('skills.git'),
      firstCommit,
    ]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain(`Server does not allow request for unadvertised object ${firstCommit}`);

    // Protocol v2 (the git CLI default since 2.26): upload-pack's v2 "fetch" command does not check
    // wants against refs at all, so the git CLI gets any object, whatever uploadpack.* says.
    // isomorphic-git only fetches over v1, where the checks above apply.
    const v2 = path.join(tmp, 'cli-fetch-v2');
    await runGit(['init', '-q', '--bare', v2]);
    await runGit(['-C', v2, 'fetch', '-q', '--depth=1', srv.urlFor('skills.git'), firstCommit]);
    expect((await runGit(['-C', v2, 'cat-file', '-t', firstCommit])).trim()).toBe('commit');
    await runGit(['-C', v2, 'fetch', '-q', '--depth=1', srv.urlFor('skills.git'), danglingCommit]);
    expect((await runGit(['-C', v2, 'cat-file', '-t', danglingCommit])).trim()).toBe('commit');
  });
});

describe('startGitHttpServer (basic auth)', () => {
  let srv: GitHttpServer;
  const auth = { username: 'alice', password: 's3cret' };
  beforeAll(async () => {
    srv = await startGitHttpServer({ root, auth });
  });
  afterAll(async () => {
    await srv.close();
  });

  it('(e) refuses a request without credentials with 401 and a Basic challenge', async () => {
    const res = await fetch(`${srv.urlFor('skills.git')}/info/refs?service=git-upload-pack`);
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Basic realm="git"');
    await res.arrayBuffer();
    expect(srv.requests.at(-1)).toEqual({
      method: 'GET',
      path: '/skills.git/info/refs',
      query: 'service=git-upload-pack',
      status: 401,
      fetch: false,
      lsRefs: false,
    });
  });

  it('(e) refuses wrong credentials', async () => {
    const res = await fetch(`${srv.urlFor('skills.git')}/info/refs?service=git-upload-pack`, {
      headers: { Authorization: `Basic ${Buffer.from('alice:wrong').toString('base64')}` },
    });
    expect(res.status).toBe(401);
    await res.arrayBuffer();
  });

  it('(e) isomorphic-git without onAuth gets HttpError 401', async () => {
    await expect(git.getRemoteInfo2({ http, url: srv.urlFor('skills.git') })).rejects.toMatchObject({
      code: 'HttpError',
      data: { statusCode: 401 },
    });
  });

  it('(e) git CLI without credentials fails', async () => {
    const { code, stderr } = await runGitFailing(['ls-remote', srv.urlFor('skills.git')]);
    expect(code).not.toBe(0);
    expect(stderr).toMatch(/Authentication failed|could not read Username|401/);
  });

  it('(e) isomorphic-git with onAuth is accepted, and fetch works', async () => {
    let asked = 0;
    const onAuth = (): { username: string; password: string } => {
      asked++;
      return auth;
    };
    const info = await git.getRemoteInfo2({
      http,
      url: srv.urlFor('skills.git'),
      protocolVersion: 1,
      onAuth,
    });
    expect(asked).toBeGreaterThan(0);
    expect(info.refs).toContainEqual(expect.objectContaining({ ref: 'refs/heads/main', oid: tipCommit }));

    const gitdir = await freshBareRepo('iso-fetch-auth', srv.urlFor('skills.git'));
    await git.fetch({
      fs,
      http,
      gitdir,
      url: srv.urlFor('skills.git'),
      ref: 'main',
      singleBranch: true,
      depth: 1,
      tags: false,
      onAuth,
    });
    expect(await hasCommit(gitdir, tipCommit)).toBe(true);
    expect(srv.requests).toContainEqual(
      expect.objectContaining({ method: 'POST', path: '/skills.git/git-upload-pack', status: 200 }),
    );
  });

  it('(e) git CLI with credentials in the URL is accepted', async () => {
    const url = srv.urlFor('skills.git').replace('http://', 'http://alice:s3cret@');
    const out = await runGit(['ls-remote', url]);
    expect(out).toContain(`${tipCommit}\trefs/heads/main`);
  });
});
