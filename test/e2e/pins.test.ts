import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parse, stringify } from 'yaml';
import type { CheckReport } from '../../src/commands/checkReport.ts';
import type { SourceDiff } from '../../src/pins/diffReport.ts';
import type { StatusReport } from '../../src/commands/status.ts';
import type { UpdateReport } from '../../src/commands/update.ts';
import { type Lockfile, readLockfile, renderLockfile } from '../../src/pins/lockfile.ts';
import { fixture, PROJECT_ROOT } from '../helpers/fixtures.ts';
import { git } from '../helpers/git.ts';
import { pushableRepo, skillMd } from '../helpers/pushable.ts';
import { makeSigningKeys, signingRepo, skill } from '../helpers/signing.ts';
import { tempDir } from '../helpers/temp.ts';
import { cli } from '../helpers/cli.ts';

beforeAll(() => void vi.stubEnv('SKILLPIN_LOG_LEVEL', 'silent'));
afterAll(() => void vi.unstubAllEnvs());

/** A config file in a folder of its own; the lockfile lands next to it. */
function configIn(config: Record<string, unknown>): { file: string; lockfile: string } {
  const dir = tempDir('skillpin-pins-');
  const file = path.join(dir, 'skillpin.yaml');
  writeFileSync(file, stringify({ dataDir: path.join(dir, 'data'), ...config }));
  return { file, lockfile: path.join(dir, 'skillpin.lock') };
}

const served = async (file: string) =>
  (JSON.parse((await cli('status', '-c', file, '--json')).stdout) as StatusReport).sources.map((s) => [
    s.id,
    s.current?.commit ?? null,
  ]);

/**
 * The README's aggregate digest, computed apart from skillpin: every file below `dir` at `commit` as git lists
 * it, `<sha256:hex> <size> <path>\n` sorted by path bytes, hashed.
 */
function oracleDigest(gitdir: string, commit: string, dir: string): string {
  const listed = execFileSync('git', [
    '--git-dir',
    gitdir,
    'ls-tree',
    '-r',
    '-z',
    '--name-only',
    commit,
    '--',
    dir,
  ]);
  const files = listed
    .toString('utf8')
    .split('\0')
    .filter((file) => file !== '')
    .map((file) => file.slice(dir.length + 1))
    .sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  const hash = createHash('sha256');
  for (const file of files) {
    const bytes = execFileSync('git', ['--git-dir', gitdir, 'cat-file', 'blob', `${commit}:${dir}/${file}`]);
    hash.update(`sha256:${createHash('sha256').update(bytes).digest('hex')} ${bytes.length} ${file}\n`);
  }
  return `sha256:${hash.digest('hex')}`;
}

describe('skillpin lock', () => {
  it('writes the example lockfile exactly, with trees and digests anyone can recompute, and reads it back', async () => {
    const catalog = fixture('catalog');
    const root = fixture('root-skill');
    // examples/skillpin.yaml as it is, in a folder whose ../.skillpin/fixtures holds the repositories this run
    // built: the lockfile names local sources by the path configured, so every path must be the example's.
    const top = tempDir('skillpin-example-');
    mkdirSync(path.join(top, 'examples'));
    mkdirSync(path.join(top, '.skillpin'));
    symlinkSync(path.dirname(catalog.gitdir), path.join(top, '.skillpin', 'fixtures'));
    const file = path.join(top, 'examples', 'skillpin.yaml');
    const lockfile = path.join(top, 'examples', 'skillpin.lock');
    writeFileSync(file, readFileSync(path.join(PROJECT_ROOT, 'examples', 'skillpin.yaml'), 'utf8'));
    const result = await cli('lock', '-c', file);
    expect([result.status, result.stderr]).toEqual([0, '']);
    const text = readFileSync(lockfile, 'utf8');
    expect(text).toBe(readFileSync(path.join(PROJECT_ROOT, 'examples', 'skillpin.lock'), 'utf8'));
    const lock = parse(text) as Lockfile;
    const c2 = catalog.commits['c2']!;
    expect(lock.sources.map((s) => [s.id, s.ref ?? null, s.commit, s.tree])).toEqual([
      ['catalog', null, c2, git(['--git-dir', catalog.gitdir, 'rev-parse', `${c2}^{tree}`])],
      [
        'catalog-v1',
        'v1',
        catalog.commits['c1'],
        git(['--git-dir', catalog.gitdir, 'rev-parse', 'v1^{tree}']),
      ],
      ['root', 'HEAD', root.commits['c1'], git(['--git-dir', root.gitdir, 'rev-parse', 'HEAD^{tree}'])],
    ]);
    for (const skillEntry of lock.sources[0]!.skills)
      expect([skillEntry.path, skillEntry.digest]).toEqual([
        skillEntry.path,
        oracleDigest(catalog.gitdir, c2, skillEntry.path),
      ]);
    expect(renderLockfile(readLockfile(lockfile))).toBe(text);
    expect(result.stdout.split('\n').slice(0, 3)).toEqual([
      `catalog: ${c2} (7 skills)`,
      `catalog-v1: ${catalog.commits['c1']} (6 skills)`,
      `root: ${root.commits['c1']} (1 skill)`,
    ]);
  });

  it('writes nothing when a source fails, and says why', async () => {
    const { file, lockfile } = configIn({
      sources: [{ id: 'gone', path: fixture('catalog').gitdir, ref: 'no-such-branch' }],
    });
    const result = await cli('lock', '-c', file);
    expect([result.status, result.stdout]).toEqual([2, '']);
    expect(result.stderr).toBe(
      `gone: FAILED source-ref-not-found: the repository has no ref "no-such-branch"\nskillpin lock: ${lockfile} not written\n`,
    );
    expect(() => readFileSync(lockfile)).toThrow('ENOENT');
  });
});

describe('serving the lockfile', () => {
  let repo: ReturnType<typeof pushableRepo>;
  let first: string;
  let config: { file: string; lockfile: string };
  beforeAll(async () => {
    repo = pushableRepo(tempDir('skillpin-locked-'), 'skills');
    first = repo.push({ 'alpha/SKILL.md': skillMd('alpha', 'one') });
    config = configIn({ sources: [{ id: 'skills', path: repo.bare, ref: 'main' }] });
    expect((await cli('lock', '-c', config.file)).status).toBe(0);
  });

  it('--locked serves the locked commit and follows no ref; without it the moved ref is served', async () => {
    const second = repo.push({ 'alpha/SKILL.md': skillMd('alpha', 'two') });
    expect((await cli('sync', '--locked', '-c', config.file)).status).toBe(0);
    expect(await served(config.file)).toEqual([['skills', first]]);
    expect((await cli('sync', '-c', config.file)).status).toBe(0);
    expect(await served(config.file)).toEqual([['skills', second]]);
    // lock: in the config does what --locked does.
    const pinned = configIn({
      lock: config.lockfile,
      sources: [{ id: 'skills', path: repo.bare, ref: 'main' }],
    });
    expect((await cli('sync', '-c', pinned.file)).status).toBe(0);
    expect(await served(pinned.file)).toEqual([['skills', first]]);
    // …and update, which follows the refs, moves the pin it names.
    expect((await cli('update', '-c', pinned.file)).status).toBe(1);
    expect(readLockfile(config.lockfile).sources[0]!.commit).toBe(second);
    expect((await cli('sync', '-c', pinned.file)).status).toBe(0);
    expect(await served(pinned.file)).toEqual([['skills', second]]);
  });

  it('refuses a lockfile that does not match the config with one message naming the source (exit 78)', async () => {
    const other = pushableRepo(tempDir('skillpin-other-'), 'other');
    other.push({ 'beta/SKILL.md': skillMd('beta', 'x') });
    const cases: Array<[Array<Record<string, unknown>>, string]> = [
      [
        [
          { id: 'skills', path: repo.bare, ref: 'main' },
          { id: 'more', path: other.bare, ref: 'main' },
        ],
        'source "more": the lockfile has no entry for it; run skillpin update more',
      ],
      [
        [{ id: 'renamed', path: repo.bare, ref: 'main' }],
        'pins source "skills", which the config does not have; run skillpin lock',
      ],
      [
        [{ id: 'skills', path: other.bare, ref: 'main' }],
        `source "skills": the lockfile pins it at local:${repo.bare}, and the config names local:${other.bare}; run skillpin update skills`,
      ],
      [
        [{ id: 'skills', path: repo.bare, ref: 'v9' }],
        'source "skills": the lockfile locked it following ref main, and the config follows v9; run skillpin update skills',
      ],
    ];
    for (const [sources, message] of cases) {
      const changed = configIn({ lock: config.lockfile, sources });
      for (const command of ['serve', 'sync']) {
        const result = await cli(command, '-c', changed.file);
        expect([command, result.status, result.stderr]).toEqual([
          command,
          78,
          `skillpin: ${config.lockfile}: ${message}\n`,
        ]);
      }
    }
    const nowhere = configIn({ sources: [{ id: 'skills', path: repo.bare, ref: 'main' }] });
    expect(await cli('serve', '--locked', '-c', nowhere.file)).toEqual({
      status: 78,
      stdout: '',
      stderr: `skillpin: ${nowhere.lockfile}: no lockfile; write one with skillpin lock\n`,
    });
  });
});

describe('skillpin update', () => {
  it('exits 0 when nothing moved, 1 when the lockfile changed (printing the diff), 64 naming no source, 2 when one fails', async () => {
    const repo = pushableRepo(tempDir('skillpin-update-'), 'skills');
    const first = repo.push({
      'alpha/SKILL.md': skillMd('alpha', 'one'),
      'alpha/notes.md': 'notes\n',
      'beta/SKILL.md': skillMd('beta', 'one'),
    });
    const { file, lockfile } = configIn({ sources: [{ id: 'skills', path: repo.bare, ref: 'main' }] });
    expect((await cli('update', '-c', file)).status).toBe(1);
    expect(readLockfile(lockfile).sources[0]!.commit).toBe(first);
    expect(await cli('update', '-c', file)).toEqual({
      status: 0,
      stdout: `${lockfile} is up to date\n`,
      stderr: '',
    });

    const second = repo.push({
      'alpha/notes.md': 'more notes\n',
      'beta/SKILL.md': null,
      'gamma/SKILL.md': skillMd('gamma', 'new'),
    });
    const before = readFileSync(lockfile, 'utf8');
    const updated = await cli('update', 'skills', '-c', file, '--json');
    expect(updated.status).toBe(1);
    const report = JSON.parse(updated.stdout) as UpdateReport;
    expect([report.changed, report.lockfile, report.sources.length]).toEqual([true, lockfile, 1]);
    const diff = report.sources[0]!;
    expect([diff.from?.commit, diff.to?.commit]).toEqual([first, second]);
    expect(diff.skills.added.map((s) => s.path)).toEqual(['gamma']);
    expect(diff.skills.removed.map((s) => s.path)).toEqual(['beta']);
    expect(diff.skills.changed.map((s) => [s.path, s.files])).toEqual([
      [
        'alpha',
        {
          added: [],
          removed: [],
          changed: [
            {
              path: 'notes.md',
              from: { size: 6, digest: `sha256:${createHash('sha256').update('notes\n').digest('hex')}` },
              to: { size: 11, digest: `sha256:${createHash('sha256').update('more notes\n').digest('hex')}` },
            },
          ],
        },
      ],
    ]);
    expect(readFileSync(lockfile, 'utf8')).not.toBe(before);
    expect(readLockfile(lockfile).sources[0]!.commit).toBe(second);

    // What CI puts in a pull request.
    const third = repo.push({ 'gamma/SKILL.md': skillMd('gamma', 'changed') });
    const markdown = await cli('update', '-c', file, '--markdown');
    expect(markdown.status).toBe(1);
    const lines = markdown.stdout.split('\n');
    expect(lines[0]).toBe('### `skills`: 1 skill changed');
    expect(lines[2]).toBe(
      `\`local:${repo.bare}\`: ${second.slice(0, 12)} (2024-06-01, unsigned or not verified) → ${third.slice(0, 12)} (2024-06-01, unsigned or not verified)`,
    );
    expect(lines).toContain('<details><summary><code>gamma</code>: 1 file changed</summary>');

    expect(await cli('update', 'nosuch', '-c', file)).toEqual({
      status: 64,
      stdout: '',
      stderr: `skillpin update: no source "nosuch" in ${file}\n`,
    });
    repo.deleteBranch('main');
    const locked = readFileSync(lockfile, 'utf8');
    const failed = await cli('update', '-c', file);
    expect([failed.status, failed.stderr]).toEqual([
      2,
      `skills: FAILED source-ref-not-found: the repository has no ref "main"\nskillpin update: ${lockfile} not written\n`,
    ]);
    expect(readFileSync(lockfile, 'utf8')).toBe(locked);
  });
});

/** What `git diff --raw` says changed between two commits, per skill folder (the oracle for `skillpin diff`). */
function rawDiff(gitdir: string, from: string, to: string, skills: readonly string[]) {
  const lines = git(['--git-dir', gitdir, 'diff', '--raw', '--no-abbrev', '--no-renames', '-r', from, to])
    .split('\n')
    .filter((line) => line !== '');
  const bySkill: Record<string, { A: string[]; D: string[]; M: string[] }> = {};
  for (const line of lines) {
    const [meta, file] = line.split('\t') as [string, string];
    const status = meta.split(' ')[4] as 'A' | 'D' | 'M';
    for (const dir of skills)
      if (file.startsWith(`${dir}/`))
        (bySkill[dir] ??= { A: [], D: [], M: [] })[status].push(file.slice(dir.length + 1));
  }
  return bySkill;
}

describe('skillpin diff', () => {
  it('agrees with git diff --raw on every file of every skill', async () => {
    const repo = pushableRepo(tempDir('skillpin-diff-'), 'skills');
    const from = repo.push({
      'skills/keep/SKILL.md': skillMd('keep', 'same'),
      'skills/edit/SKILL.md': skillMd('edit', 'one'),
      'skills/edit/ref/a.md': 'a\n',
      'skills/edit/ref/b.md': 'b\n',
      'skills/edit/inner/SKILL.md': skillMd('inner', 'nested'),
      'skills/gone/SKILL.md': skillMd('gone', 'bye'),
      'skills/gone/x.md': 'x\n',
      'README.md': 'not a skill\n',
    });
    const to = repo.push({
      'skills/edit/SKILL.md': skillMd('edit', 'two'),
      'skills/edit/ref/a.md': null,
      'skills/edit/ref/c.md': 'c\n',
      'skills/edit/inner/SKILL.md': skillMd('inner', 'nested, changed'),
      'skills/gone/SKILL.md': null,
      'skills/gone/x.md': null,
      'skills/new/SKILL.md': skillMd('new', 'hello'),
      'README.md': 'still not a skill\n',
    });
    const result = await cli('diff', repo.bare, from.slice(0, 10), 'main', '--json');
    // 1, as diff(1): the ends differ.
    expect([result.status, result.stderr]).toEqual([1, '']);
    const diff = JSON.parse(result.stdout) as SourceDiff;
    expect([diff.from?.commit, diff.to?.commit]).toEqual([from, to]);
    const oracle = rawDiff(repo.bare, from, to, [
      'skills/edit',
      'skills/edit/inner',
      'skills/gone',
      'skills/new',
    ]);
    expect(diff.skills.added.map((s) => s.path)).toEqual(['skills/new']);
    expect(diff.skills.removed.map((s) => [s.path, s.files])).toEqual([
      ['skills/gone', oracle['skills/gone']!.D.length],
    ]);
    expect(diff.skills.unchanged).toBe(1);
    const ours = Object.fromEntries(
      diff.skills.changed.map((s) => [
        s.path,
        {
          A: s.files.added.map((f) => f.path),
          D: s.files.removed.map((f) => f.path),
          M: s.files.changed.map((f) => f.path),
        },
      ]),
    );
    expect(ours).toEqual({
      'skills/edit': oracle['skills/edit'],
      'skills/edit/inner': oracle['skills/edit/inner'],
    });
    // Sizes are the blobs' own, as git reports them.
    const c = diff.skills.changed[0]!.files.added[0]!;
    expect(String(c.size)).toBe(
      git(['--git-dir', repo.bare, 'cat-file', '-s', `${to}:skills/edit/ref/c.md`]),
    );
  });

  it('agrees with git diff --raw on the fixture catalog, and reports problems introduced and resolved', async () => {
    const catalog = fixture('catalog');
    const [c1, c2] = [catalog.commits['c1']!, catalog.commits['c2']!];
    const result = await cli('diff', catalog.gitdir, 'v1', c2, '--paths', 'skills', '--json');
    const diff = JSON.parse(result.stdout) as SourceDiff;
    expect([result.status, diff.from?.commit, diff.to?.commit, diff.repository]).toEqual([
      1,
      c1,
      c2,
      `local:${catalog.gitdir}`,
    ]);
    const skills = (
      JSON.parse((await cli('check', catalog.gitdir, '--paths', 'skills', '--json')).stdout) as CheckReport
    ).skills.map((s) => s.path);
    const oracle = rawDiff(catalog.gitdir, c1, c2, skills);
    expect(diff.skills.added.map((s) => s.path)).toEqual(['skills/changelog-writer']);
    expect(
      Object.fromEntries(
        diff.skills.changed.map((s) => [
          s.path,
          {
            A: s.files.added.map((f) => f.path),
            D: s.files.removed.map((f) => f.path),
            M: s.files.changed.map((f) => f.path),
          },
        ]),
      ),
    ).toEqual(
      Object.fromEntries(Object.entries(oracle).filter(([dir]) => dir !== 'skills/changelog-writer')),
    );
    expect(diff.problems).toEqual({ introduced: [], resolved: [] });
  });

  it('takes what git rev-parse accepts in a local repository (HEAD~1, tag^{commit}), and names what it takes', async () => {
    const catalog = fixture('catalog');
    const c2 = catalog.commits['c2']!;
    const result = await cli('diff', catalog.gitdir, 'main~1', 'v2^{commit}', '--paths', 'skills', '--json');
    const diff = JSON.parse(result.stdout) as SourceDiff;
    expect([result.status, diff.from?.commit, diff.to?.commit]).toEqual([1, catalog.commits['c1'], c2]);
    // The same commit by two names: nothing differs, and diff says so by its status too.
    const same = await cli('diff', catalog.gitdir, 'main', c2, '--paths', 'skills');
    expect([same.status, same.stderr]).toEqual([0, '']);
    expect(await cli('diff', catalog.gitdir, 'main~99', 'main')).toEqual({
      status: 2,
      stdout: '',
      stderr:
        'skillpin diff: source-ref-not-found: the repository has no commit "main~99": give a branch, tag, HEAD, a commit id (short or full), or what `git rev-parse` accepts (HEAD~1, v1.2^{commit})\n',
    });
  });

  it('names both signers when given the keys, and fails with the reason when an end does not verify', async () => {
    const keys = makeSigningKeys();
    const repo = signingRepo(keys);
    const a = repo.commit({ 'skills/s/SKILL.md': skill('s') }, { ssh: 'alice' });
    const b = repo.commit({ 'skills/s/SKILL.md': skill('s', 'two') }, { gpg: 'release' });
    const signed = await cli(
      'diff',
      repo.dir,
      a,
      b,
      '--ssh-allowed-signers',
      keys.allowedSigners,
      '--gpg-key',
      keys.gpgPublic.release,
      '--json',
    );
    const diff = JSON.parse(signed.stdout) as SourceDiff;
    expect([diff.from?.signer?.identity, diff.to?.signer?.identity]).toEqual([
      'alice@example.com',
      keys.gpgFingerprint.release,
    ]);
    const c = repo.commit({ 'skills/s/SKILL.md': skill('s', 'three') });
    const refused = await cli('diff', repo.dir, a, c, '--ssh-allowed-signers', keys.allowedSigners);
    expect([refused.status, refused.stderr]).toEqual([
      2,
      `skillpin diff: source-unsigned: commit ${c} is not signed\n`,
    ]);
  });
});

describe('skillpin check: signatures, short commits, short names', () => {
  it('verifies with --ssh-allowed-signers and --require-signed; an unsigned commit is a finding (exit 1)', async () => {
    const keys = makeSigningKeys();
    const repo = signingRepo(keys);
    const signedCommit = repo.commit({ 'skills/s/SKILL.md': skill('s') }, { ssh: 'alice' });
    const ok = await cli('check', repo.dir, '--ssh-allowed-signers', keys.allowedSigners, '--json');
    const report = JSON.parse(ok.stdout) as CheckReport;
    expect([ok.status, report.commit, report.signer]).toEqual([
      0,
      signedCommit,
      { type: 'ssh', identity: 'alice@example.com', key: keys.sshFingerprint.alice, object: 'commit' },
    ]);
    const human = await cli('check', repo.dir, '--ssh-allowed-signers', keys.allowedSigners);
    expect(human.stdout.split('\n')[2]).toBe(
      `signed by alice@example.com (ssh commit, key ${keys.sshFingerprint.alice})`,
    );
    const tagged = await cli(
      'check',
      repo.dir,
      '--ref',
      'main',
      '--ssh-allowed-signers',
      keys.allowedSigners,
      '--require-signed',
      'tag',
      '--json',
    );
    expect([tagged.status, JSON.parse(tagged.stdout)]).toEqual([
      1,
      {
        version: 1,
        error: {
          reason: 'source-unsigned',
          detail: 'verify.require is tag, and the ref names no annotated tag',
        },
      },
    ]);
    expect(await cli('check', repo.dir, '--require-signed', 'commit')).toEqual({
      status: 64,
      stdout: '',
      stderr:
        'skillpin check: --require-signed needs the keys to verify with: --ssh-allowed-signers or --gpg-key\n',
    });
    // The refusal of an unsigned commit is one whole line, in text as in GitHub annotations.
    const unsigned = repo.commit({ 'skills/s/SKILL.md': skill('s', 'unsigned') });
    const verifying = [
      'check',
      repo.dir,
      '--ssh-allowed-signers',
      keys.allowedSigners,
      '--require-signed',
      'commit',
    ];
    expect(await cli(...verifying)).toEqual({
      status: 1,
      stdout: '',
      stderr: `skillpin check: source-unsigned: commit ${unsigned} is not signed\n`,
    });
    expect((await cli(...verifying, '--format', 'github')).stdout).toBe(
      `::error title=skillpin check::commit ${unsigned} is not signed\n`,
    );
  });

  it('takes a short commit id in a local repository and prints the full commit', async () => {
    const catalog = fixture('catalog');
    const c1 = catalog.commits['c1']!;
    const result = await cli('check', catalog.gitdir, '--commit', c1.slice(0, 7), '--paths', 'skills');
    expect(result.stdout.split('\n')[0]).toBe(`local:${catalog.gitdir} @ ${c1} (2024-03-01T09:00:00.000Z)`);
    const none = await cli('check', catalog.gitdir, '--commit', 'fffffff', '--json');
    expect([none.status, JSON.parse(none.stdout)]).toEqual([
      2,
      { version: 1, error: { reason: 'source-commit-not-found', detail: 'no commit starts with fffffff' } },
    ]);
  });

  it('refuses the web page of a folder with the arguments that say the same, before any network', async () => {
    expect(await cli('check', 'https://github.com/acme/skills/tree/main/skills/pdf')).toEqual({
      status: 64,
      stdout: '',
      stderr:
        'skillpin check: https://github.com/acme/skills/tree/main/skills/pdf is the web page of a folder, not a ' +
        'repository (where its ref ends and its path begins is ambiguous); give github:acme/skills --ref main ' +
        '--paths skills/pdf\n',
    });
    expect((await cli('check', 'github:not-a-name')).stderr).toBe(
      'skillpin check: github:not-a-name: expected github:owner/repo or gitlab:group/project\n',
    );
  });
});
