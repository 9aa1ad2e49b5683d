import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  type GitError,
  openLocalRepository,
  readBlob,
  resolveLocalRef,
  walkCommit,
} from '../../src/git/index.ts';
import { openCliRepository } from '../../src/git/cli/backend.ts';
import { classifyRun } from '../../src/git/cli/classify.ts';
import { childEnv } from '../../src/git/cli/env.ts';
import { runGit } from '../../src/git/cli/run.ts';
import { BACKENDS, withEnv } from '../helpers/backends.ts';
import { fixture } from '../helpers/fixtures.ts';
import { makeRepo } from '../helpers/repo.ts';
import { tempDir } from '../helpers/temp.ts';

const catalog = fixture('catalog');
const c2 = catalog.commits['c2']!;
const git = (dir: string, ...args: string[]) =>
  execFileSync('git', ['-C', dir, ...args], {
    encoding: 'utf8',
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 't',
      GIT_AUTHOR_EMAIL: 't@t',
      GIT_COMMITTER_NAME: 't',
      GIT_COMMITTER_EMAIL: 't@t',
    },
  }).trim();

describe.each(BACKENDS)('a local repository, $name backend', ({ settings }) => {
  it('finds a loose object written after its absence was seen', async () => {
    const { dir } = makeRepo({ 'README.md': 'hello\n' });
    const repo = await openLocalRepository(dir, settings);
    const content = 'written later by another program\n';
    const oid = execFileSync('git', ['-C', dir, 'hash-object', '--stdin'], {
      input: content,
      encoding: 'utf8',
    }).trim();
    const missing = await readBlob(repo, oid).catch((error: unknown) => error);
    expect((missing as GitError).code).toBe('source-incomplete');
    execFileSync('git', ['-C', dir, 'hash-object', '-w', '--stdin'], { input: content });
    expect(new TextDecoder().decode(await readBlob(repo, oid))).toBe(content);
    await repo.close();
  });

  it('reads the objects its alternates hold, and theirs in turn (clones made with --shared)', async () => {
    const first = makeRepo({ 'a.md': 'from the first\n' });
    const parent = tempDir('skillpin-shared-');
    const child = tempDir('skillpin-shared-');
    git(parent, 'clone', '--quiet', '--shared', first.dir, '.');
    writeFileSync(path.join(parent, 'b.md'), 'from the second\n');
    git(parent, 'add', 'b.md');
    git(parent, 'commit', '--quiet', '-m', 'b');
    git(child, 'clone', '--quiet', '--shared', parent, '.');
    writeFileSync(path.join(child, 'c.md'), 'from the third\n');
    git(child, 'add', 'c.md');
    git(child, 'commit', '--quiet', '-m', 'c');
    const repo = await openLocalRepository(child, settings);
    const walked = await walkCommit(repo, git(child, 'rev-parse', 'HEAD'));
    const files = [];
    for (const entry of walked.entries)
      files.push([entry.path, new TextDecoder().decode(await readBlob(repo, entry.id))]);
    expect(files).toEqual([
      ['a.md', 'from the first\n'],
      ['b.md', 'from the second\n'],
      ['c.md', 'from the third\n'],
    ]);
    await repo.close();
  });

  it('reads every object of a deeply deltified pack exactly as git does (offset and ref deltas, 64-bit offsets)', async () => {
    for (const offsets of ['true', 'false']) {
      const copy = path.join(mkdtempSync(path.join(tmpdir(), 'skillpin-pack-')), 'catalog.git');
      cpSync(catalog.gitdir, copy, { recursive: true });
      execFileSync('git', [
        '--git-dir',
        copy,
        '-c',
        `repack.useDeltaBaseOffset=${offsets}`,
        '-c',
        `pack.useDeltaBaseOffset=${offsets}`,
        'repack',
        '-a',
        '-d',
        '-f',
        '-q',
        '--depth=50',
        '--window=250',
      ]);
      // Rewrite the index with the offsets of the pack's second half in the 64-bit table.
      const pack = execFileSync('sh', ['-c', `ls ${copy}/objects/pack/*.pack`], { encoding: 'utf8' }).trim();
      execFileSync('rm', [pack.replace(/\.pack$/, '.idx')]);
      execFileSync(
        'git',
        ['--git-dir', copy, 'index-pack', `--index-version=2,${Math.floor(statSync(pack).size / 2)}`, pack],
        {
          stdio: 'ignore',
        },
      );
      const repo = await openLocalRepository(copy, settings);
      // git's own answer for every object: `<oid> <type> <size>\n<content>\n`, one after another.
      const batch = execFileSync('git', ['--git-dir', copy, 'cat-file', '--batch-all-objects', '--batch']);
      let objects = 0;
      for (let at = 0; at < batch.length; objects++) {
        const newline = batch.indexOf(10, at);
        const [oid, type, size] = batch.toString('latin1', at, newline).split(' ') as [
          string,
          string,
          string,
        ];
        const found = await repo.readObject(oid);
        expect(found?.type).toBe(type);
        expect(found!.data.equals(batch.subarray(newline + 1, newline + 1 + Number(size)))).toBe(true);
        at = newline + 1 + Number(size) + 1;
      }
      expect(objects).toBeGreaterThan(30);
      await repo.close();
    }
  });

  it('resolves branches, annotated tags and HEAD, and refuses a ref that is a branch and a tag', async () => {
    const repo = await openLocalRepository(catalog.gitdir, settings);
    expect(await resolveLocalRef(repo, 'main')).toBe(c2);
    expect(await resolveLocalRef(repo, 'HEAD')).toBe(c2);
    expect(await resolveLocalRef(repo, 'v2')).toBe(c2);
    expect(await resolveLocalRef(repo, 'v1')).toBe(catalog.commits['c1']);
    const { dir } = makeRepo({ 'a.md': 'a\n' });
    git(dir, 'tag', 'main');
    const both = await openLocalRepository(dir, settings);
    expect(((await resolveLocalRef(both, 'main').catch((e: unknown) => e)) as GitError).code).toBe(
      'source-ref-ambiguous',
    );
    expect(((await resolveLocalRef(both, 'mai').catch((e: unknown) => e)) as GitError).code).toBe(
      'source-ref-not-found',
    );
  });

  it('reads the objects the commit names, never replacements from refs/replace', async () => {
    const { dir, commit } = makeRepo({ 'a.md': 'original\n' });
    const original = git(dir, 'rev-parse', `${commit}:a.md`);
    const other = execFileSync('git', ['-C', dir, 'hash-object', '-w', '--stdin'], {
      input: 'replaced\n',
      encoding: 'utf8',
    }).trim();
    git(dir, 'replace', original, other);
    expect(git(dir, 'cat-file', 'blob', original)).toBe('replaced');
    const repo = await openLocalRepository(dir, settings);
    expect(new TextDecoder().decode(await readBlob(repo, original))).toBe('original\n');
    await repo.close();
  });
});

describe('the git child (cli backend)', () => {
  it('asks one git process for the branch and the tag a short name may mean, and reads no object for a commit', async () => {
    // A `git` that logs its arguments, then runs the real one.
    const bin = tempDir('skillpin-bin-');
    const log = path.join(bin, 'argv.log');
    const real = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
    writeFileSync(path.join(bin, 'git'), `#!/bin/sh\necho "$*" >> '${log}'\nexec '${real}' "$@"\n`, {
      mode: 0o755,
    });
    const { dir } = makeRepo({ 'a.md': 'a\n' });
    git(dir, 'tag', 'main');
    // The object reader (`cat-file --batch-command`) starts only to peel an annotated tag (v2): for-each-ref says
    // a branch or a lightweight tag names a commit.
    for (const [gitdir, ref, expected, reader] of [
      [catalog.gitdir, 'main', c2, false],
      [catalog.gitdir, 'v1', catalog.commits['c1'], false],
      [catalog.gitdir, 'v2', c2, true],
      [path.join(dir, '.git'), 'main', 'source-ref-ambiguous', false],
      [catalog.gitdir, 'nothing', 'source-ref-not-found', false],
    ] as const) {
      const repo = await openCliRepository(gitdir, false, { git: path.join(bin, 'git') });
      const resolved = await resolveLocalRef(repo, ref).catch((error: GitError) => error.code);
      await repo.close();
      const lines = readFileSync(log, 'utf8').split('\n');
      const asked = lines.filter((line) => line.includes('for-each-ref'));
      rmSync(log);
      expect([
        ref,
        resolved,
        asked.map((line) => line.replace(/^.* -- /, '')),
        lines.some((line) => line.includes('cat-file')),
      ]).toEqual([ref, expected, [`refs/heads/${ref} refs/tags/${ref}`], reader]);
    }
  });

  it('reads a repository owned by another user (no "dubious ownership")', async () => {
    const { dir, commit } = makeRepo({ 'a.md': 'a\n' });
    // git's own switch for "the owner differs": plain git then refuses the work tree.
    const other = { GIT_TEST_ASSUME_DIFFERENT_OWNER: '1' };
    const plain = spawnSync('git', ['-C', dir, 'log', '-1'], {
      env: { ...process.env, ...other, GIT_CONFIG_GLOBAL: '/dev/null' },
      encoding: 'utf8',
    });
    expect(plain.stderr).toContain('dubious ownership');
    const repo = await openCliRepository(path.join(dir, '.git'), false, { git: 'git', vars: other });
    expect((await walkCommit(repo, commit)).entries.map((e) => e.path)).toEqual(['a.md']);
    await repo.close();
  });

  it('never reads the user’s global git configuration', async () => {
    const { dir, commit } = makeRepo({ 'a.md': 'a\n' });
    const home = mkdtempSync(path.join(tmpdir(), 'skillpin-home-'));
    // If this config were read, the bare repository's objects would come from a folder that does not exist.
    writeFileSync(
      path.join(home, '.gitconfig'),
      '[core]\n\trepositoryformatversion = 9\n[safe]\n\tdirectory = nothing\n',
    );
    await withEnv({ HOME: home, XDG_CONFIG_HOME: home }, async () => {
      expect(
        spawnSync('git', ['config', '--global', 'core.repositoryformatversion'], {
          encoding: 'utf8',
        }).stdout.trim(),
      ).toBe('9');
      const repo = await openCliRepository(path.join(dir, '.git'), false, { git: 'git' });
      expect((await walkCommit(repo, commit)).entries.length).toBe(1);
      const shown = await runGit('git', ['config', '--global', 'core.repositoryformatversion']);
      expect(shown.stdout.toString()).toBe('');
      await repo.close();
    });
  });

  it('gets only the protocols it is given, no prompt, and none of the user’s git variables', async () => {
    const env = childEnv(
      {
        PATH: '/bin',
        GIT_DIR: '/elsewhere',
        GIT_CONFIG_PARAMETERS: "'core.pager'='x'",
        SECRET: 's',
        HTTPS_PROXY: 'http://p:1',
      },
      { protocols: ['https'] },
    );
    expect(env).toMatchObject({
      PATH: '/bin',
      HTTPS_PROXY: 'http://p:1',
      GIT_ALLOW_PROTOCOL: 'https',
      GIT_TERMINAL_PROMPT: '0',
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_SSH_COMMAND: 'ssh -o BatchMode=yes',
    });
    expect(Object.keys(env)).not.toContain('GIT_DIR');
    expect(Object.keys(env)).not.toContain('GIT_CONFIG_PARAMETERS');
    expect(Object.keys(env)).not.toContain('SECRET');
    const refused = await runGit('git', ['ls-remote', `file://${catalog.gitdir}`], { protocols: ['https'] });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain("transport 'file' not allowed");
    const allowed = await runGit('git', ['ls-remote', `file://${catalog.gitdir}`, 'refs/heads/main'], {
      protocols: ['file'],
    });
    expect(allowed.stdout.toString()).toBe(`${c2}\trefs/heads/main\n`);
  });

  it('writing past the file-size limit fails with EFBIG in git’s words (no silent SIGXFSZ): a full disk', async () => {
    const gitdir = path.join(mkdtempSync(path.join(tmpdir(), 'skillpin-fsize-')), 'store.git');
    git(tmpdir(), 'init', '--quiet', '--bare', gitdir);
    // 64 KiB that do not compress, as a loose object, under a file-size limit of a few KiB.
    const write = `ulimit -f 4 && exec git --git-dir "$0" hash-object -w --stdin`;
    const result = await runGit('sh', ['-c', write, gitdir], {
      input: randomBytes(48 * 1024).toString('base64'),
    });
    expect([result.code, result.stderr]).toEqual([
      128,
      'fatal: unable to write loose object file: File too large\n',
    ]);
    expect(classifyRun(result, 'writing an object').message).toBe(
      'writing an object: a file-size limit stops writes in dataDir',
    );
    expect(classifyRun(result, 'writing an object').code).toBe('source-disk-full');
    rmSync(path.dirname(gitdir), { recursive: true });
  });
});
