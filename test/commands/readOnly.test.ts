import { execFileSync, spawnSync } from 'node:child_process';
import {
  accessSync,
  chmodSync,
  chownSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  utimesSync,
  constants,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { BACKENDS, withEnv } from '../helpers/backends.ts';
import { cli } from '../helpers/cli.ts';
import { repositoryPrint } from '../helpers/fileHashes.ts';
import { git, gitEnv } from '../helpers/git.ts';
import { skillMd } from '../helpers/pushable.ts';
import { makeRepo } from '../helpers/repo.ts';
import { CLI_ARGS, writeConfig } from '../helpers/server.ts';
import { tempDir } from '../helpers/temp.ts';
import { serveInProcess } from '../helpers/serving.ts';

beforeAll(() => void vi.stubEnv('SKILLPIN_LOG_LEVEL', 'silent'));
afterAll(() => void vi.unstubAllEnvs());

/** A skill whose name `check --fix` corrects. */
const MISNAMED = '---\nname: Ahrefs Automation\ndescription: Automates Ahrefs.\n---\nbody\n';

/**
 * A work tree of two commits (the first tagged v1; the index holding git's cache-tree), then edited: one file
 * changed, new ones, and one touched with its bytes kept, so its index entry is stale and a plain `git status`
 * would rewrite the index.
 */
function editedRepo(): { dir: string; config: string; first: string } {
  const repo = makeRepo({
    'skills/alpha/SKILL.md': skillMd('alpha', 'one'),
    'skills/alpha/guide.md': 'guide\n',
    'skills/ahrefs-automation/SKILL.md': MISNAMED,
  });
  const first = git(['-C', repo.dir, 'rev-parse', '--short', 'HEAD']);
  git(['-C', repo.dir, 'tag', 'v1']);
  writeFileSync(path.join(repo.dir, 'skills', 'alpha', 'guide.md'), 'guide, second\n');
  git(['-C', repo.dir, 'commit', '--quiet', '--all', '-m', 'second']);
  writeFileSync(path.join(repo.dir, 'skills', 'alpha', 'guide.md'), 'guide, edited\n');
  mkdirSync(path.join(repo.dir, 'skills', 'beta'));
  writeFileSync(path.join(repo.dir, 'skills', 'beta', 'SKILL.md'), skillMd('beta', 'two'));
  // A file and a folder the repository already holds (blob, tree): git freshens such objects when it writes them.
  writeFileSync(path.join(repo.dir, 'skills', 'beta', 'guide.md'), 'guide\n');
  cpSync(path.join(repo.dir, 'skills', 'ahrefs-automation'), path.join(repo.dir, 'skills', 'ahrefs-copy'), {
    recursive: true,
  });
  const later = new Date(Date.now() + 60_000);
  utimesSync(path.join(repo.dir, 'skills', 'alpha', 'SKILL.md'), later, later);
  const config = writeConfig({ sources: [{ id: 'local', path: repo.dir, ref: 'HEAD' }] });
  return { dir: repo.dir, config, first };
}

type Run = (repo: ReturnType<typeof editedRepo>) => Promise<Result>;

/**
 * The read-only commands that take the repository itself (`first`: the short id of its first commit), and the exit
 * status each gives on editedRepo().
 */
const ON_REPOSITORY: Array<[string, (dir: string, first: string) => string[], number]> = [
  ['check', (dir) => ['check', dir], 1],
  ['check --worktree', (dir) => ['check', dir, '--worktree'], 1],
  ['check --no-worktree', (dir) => ['check', dir, '--no-worktree'], 1],
  ['check --json', (dir) => ['check', dir, '--json'], 1],
  ['check --fix', (dir) => ['check', dir, '--fix'], 1],
  ['check --format github', (dir) => ['check', dir, '--format', 'github'], 1],
  [
    'check --ref',
    (dir) => ['check', dir, '--ref', 'v1', '--problems-only', '--strict', '--paths', 'skills'],
    1,
  ],
  ['check --commit', (dir, first) => ['check', dir, '--commit', first], 1],
  ['diff', (dir) => ['diff', dir, 'HEAD~1', 'HEAD'], 1],
  ['diff of commit ids', (dir, first) => ['diff', dir, first, 'main', '--json'], 1],
];

/** `verify` of a server serving the config (started in process: it is the server that reads the repository). */
const verifyServing: Run = async (repo) => {
  const server = await serveInProcess(repo.config);
  try {
    return await cli('verify', server.url);
  } finally {
    await server.stop();
  }
};

/** Every read-only command, how it is run on the repository (or a config of it), and the exit status it gives. */
const COMMANDS: Array<[string, Run, number]> = [
  ...ON_REPOSITORY.map(([label, args, status]): [string, Run, number] => [
    label,
    (repo) => cli(...args(repo.dir, repo.first)),
    status,
  ]),
  ['status', (repo) => cli('status', '--config', repo.config), 0],
  ['verify', verifyServing, 0],
];

describe('the fixture', () => {
  it('is one git itself would write to: a plain `git status` rewrites its index', () => {
    const repo = editedRepo();
    const before = repositoryPrint(repo.dir);
    execFileSync('git', ['-C', repo.dir, 'status', '--porcelain'], { env: gitEnv() });
    const after = repositoryPrint(repo.dir);
    expect(after.gitdir['index']).not.toBe(before.gitdir['index']);
    expect(after.mtimesNs['index']).not.toBe(before.mtimesNs['index']);
  });

  it('holds objects git would freshen: staging it into other objects that borrow these touches them', () => {
    const repo = editedRepo();
    const scratch = tempDir('skillpin-scratch-');
    mkdirSync(path.join(scratch, 'objects'));
    const env = {
      ...gitEnv(),
      GIT_INDEX_FILE: path.join(scratch, 'index'),
      GIT_OBJECT_DIRECTORY: path.join(scratch, 'objects'),
      GIT_ALTERNATE_OBJECT_DIRECTORIES: path.join(repo.dir, '.git', 'objects'),
    };
    const before = repositoryPrint(repo.dir);
    execFileSync('git', ['-C', repo.dir, 'read-tree', 'HEAD'], { env });
    execFileSync('git', ['-C', repo.dir, 'add', '--all'], { env });
    const after = repositoryPrint(repo.dir);
    expect(after.gitdir).toEqual(before.gitdir);
    // The blobs it holds already: each file HEAD has unchanged (read-tree leaves no stat data: all are hashed
    // again), and skills/beta/guide.md, the first commit's skills/alpha/guide.md again.
    const held = [skillMd('alpha', 'one'), MISNAMED, 'guide\n'].map((text) => {
      const blob = execFileSync('git', ['hash-object', '--stdin'], { input: text, encoding: 'utf8' }).trim();
      return path.join('objects', blob.slice(0, 2), blob.slice(2));
    });
    const touched = Object.keys(before.mtimesNs).filter((f) => after.mtimesNs[f] !== before.mtimesNs[f]);
    expect(touched.sort()).toEqual(held.sort());
  });
});

describe.each(BACKENDS)('read-only commands on the $name backend', ({ name }) => {
  it.each(COMMANDS)('%s leaves .git/ and the work tree byte for byte', async (label, run, status) => {
    const repo = editedRepo();
    await withEnv({ SKILLPIN_GIT_BACKEND: name }, async () => {
      // status reads what a sync recorded: the sync is not under test.
      if (label === 'status') expect((await cli('sync', '--config', repo.config)).status).toBe(0);
      const before = repositoryPrint(repo.dir);
      const result = await run(repo);
      expect(result.status).toBe(status);
      expect(repositoryPrint(repo.dir)).toEqual(before);
    });
  });
});

type Result = { status: number; stdout: string; stderr: string };

/** What each command of ON_REPOSITORY gave on `dir`, run by `run`; the moment a work tree was checked masked. */
async function outcomes(
  dir: string,
  first: string,
  run: (args: string[]) => Result | Promise<Result>,
): Promise<Result[]> {
  const all: Result[] = [];
  for (const [, args] of ON_REPOSITORY) {
    const result = await run(args(dir, first));
    // `commitTime` of a work tree checked with --json is now.
    const stdout = result.stdout.replace(/"commitTime": "[^"]*"/, '"commitTime": "(now)"');
    all.push({ status: result.status, stdout, stderr: result.stderr });
  }
  return all;
}

/** `skillpin <args>` in this process, on the `backend`, with `env` added. */
const inProcess =
  (backend: string, env: Record<string, string> = {}) =>
  (args: string[]) =>
    withEnv({ SKILLPIN_GIT_BACKEND: backend, ...env }, () => cli(...args));

const ROOT = process.getuid?.() === 0;
/** nobody and nogroup. */
const OTHER = { uid: 65534, gid: 65534 };

/**
 * Makes `dir` another user's: as root, by giving it to nobody; otherwise (no chown then), by git's own switch
 * that has it take every repository for another user's (returned, to run with). Either way plain git refuses it.
 */
function foreign(dir: string): Record<string, string> {
  if (!ROOT) return { GIT_TEST_ASSUME_DIFFERENT_OWNER: '1' };
  execFileSync('chown', ['-R', `${OTHER.uid}:${OTHER.gid}`, dir]);
  return {};
}

/** Whether the commands below may write `file`: as nobody under root, else as this user. */
function writable(file: string): boolean {
  if (ROOT) return spawnSync('test', ['-w', file], OTHER).status === 0;
  try {
    accessSync(file, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/** `skillpin <args>` run as nobody on the `backend`, with a temp folder and home of its own under `shared`. */
const asNobody = (shared: string, backend: string) => (args: string[]) => {
  const home = path.join(shared, 'nobody');
  mkdirSync(home, { recursive: true });
  chownSync(home, OTHER.uid, OTHER.gid);
  const child = spawnSync(process.execPath, [...CLI_ARGS, ...args], {
    ...OTHER,
    env: {
      PATH: process.env['PATH']!,
      HOME: home,
      TMPDIR: home,
      SKILLPIN_LOG_LEVEL: 'silent',
      SKILLPIN_GIT_BACKEND: backend,
    },
    encoding: 'utf8',
  });
  return { status: child.status ?? -1, stdout: child.stdout, stderr: child.stderr };
};

describe.each(BACKENDS)('on the $name backend, a repository', ({ name }) => {
  it('of another user is read as the user named it, and left byte for byte', async () => {
    const repo = editedRepo();
    const owned = await outcomes(repo.dir, repo.first, inProcess(name));
    expect(owned.map((o) => o.status)).toEqual(ON_REPOSITORY.map(([, , status]) => status));
    const simulated = foreign(repo.dir);
    const refused = spawnSync('git', ['-C', repo.dir, 'rev-parse', 'HEAD'], {
      env: { ...gitEnv(), ...simulated },
      encoding: 'utf8',
    });
    expect([refused.status, refused.stderr.split('\n')[0]]).toEqual([
      128,
      `fatal: detected dubious ownership in repository at '${repo.dir}'`,
    ]);
    const before = repositoryPrint(repo.dir);
    expect(await outcomes(repo.dir, repo.first, inProcess(name, simulated))).toEqual(owned);
    expect(repositoryPrint(repo.dir)).toEqual(before);
  });

  it('that cannot be written is read, and left byte for byte', async () => {
    const repo = editedRepo();
    await withShared(repo.dir, async (shared, dir) => {
      const wrote = await outcomes(dir, repo.first, inProcess(name));
      expect(wrote.map((o) => o.status)).toEqual(ON_REPOSITORY.map(([, , status]) => status));
      execFileSync('chmod', ['-R', 'a-w,a+rX', dir]);
      expect([writable(path.join(dir, '.git')), writable(path.join(dir, '.git', 'index'))]).toEqual([
        false,
        false,
      ]);
      const before = repositoryPrint(dir);
      expect(await outcomes(dir, repo.first, asOther(shared, name))).toEqual(wrote);
      expect(repositoryPrint(dir)).toEqual(before);
    });
  });
});

it('a repository that cannot be read is reported so, not taken for no repository', async () => {
  await withShared(editedRepo().dir, async (shared, dir) => {
    chmodSync(dir, 0);
    expect(await asOther(shared, 'cli')(['check', dir])).toEqual({
      status: 2,
      stdout: '',
      stderr: `skillpin check: source-not-a-repository: ${dir} cannot be read (permission denied)\n`,
    });
  });
});

/**
 * Runs `work` on a copy of the repository `from` (mtimes kept) at `<shared>/repo`, `shared` a folder every user may
 * reach (the tests' temp dirs are private), removed afterwards.
 */
async function withShared(from: string, work: (shared: string, dir: string) => Promise<void>) {
  const shared = mkdtempSync('/tmp/skillpin-readonly-');
  try {
    chmodSync(shared, 0o755);
    const dir = path.join(shared, 'repo');
    cpSync(from, dir, { recursive: true, preserveTimestamps: true });
    await work(shared, dir);
  } finally {
    execFileSync('chmod', ['-R', 'u+rwX', shared]);
    rmSync(shared, { recursive: true, force: true });
  }
}

/** Root writes and reads whatever the modes say: as root, the commands run as nobody; otherwise as this user. */
const asOther = (shared: string, backend: string) => (ROOT ? asNobody(shared, backend) : inProcess(backend));
