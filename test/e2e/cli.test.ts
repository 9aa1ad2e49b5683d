import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { SkillsClient } from '@modelcontextprotocol/client/ext/skills';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { CheckReport } from '../../src/commands/checkReport.ts';
import type { StatusReport } from '../../src/commands/status.ts';
import type { VerifyReport } from '../../src/commands/verify.ts';
import { loadConfig } from '../../src/config/index.ts';
import { fixture } from '../helpers/fixtures.ts';
import { git } from '../helpers/git.ts';
import { loadedModules, recordedCli } from '../helpers/loadedModules.ts';
import { skillMd } from '../helpers/pushable.ts';
import { makeRepo } from '../helpers/repo.ts';
import { startGitHttpServer, type GitHttpServer } from '../helpers/gitHttpServer.ts';
import { writeConfig } from '../helpers/server.ts';
import { serveInProcess } from '../helpers/serving.ts';
import { silentRemote } from '../helpers/slowRemotes.ts';
import { tempDir } from '../helpers/temp.ts';
import { until } from '../helpers/until.ts';
import { cli } from '../helpers/cli.ts';

const catalog = fixture('catalog');
const c1 = catalog.commits['c1']!;
const c2 = catalog.commits['c2']!;
const pinnedC2 = { id: 'catalog', path: catalog.gitdir, commit: c2, paths: ['skills'] };
/** The skills of catalog@c2 as skills/list gives them, with the number of files of each. */
const C2_SKILLS: Array<[string, number]> = [
  ['changelog-writer', 1],
  ['data-pipeline', 3],
  ['data-pipeline/stages/validate-rows', 2],
  ['git-commit-style', 1],
  ['pdf-forms', 3],
  ['release-notes', 4],
  ['vercel-composition-patterns', 1],
];
const uriOf = (skill: string) => `skill://catalog/${c2}/skills/${skill}/SKILL.md`;

// The commands run in this process: their logs (stderr, JSON lines) would only clutter the test output.
beforeAll(() => void vi.stubEnv('SKILLPIN_LOG_LEVEL', 'silent'));
afterAll(() => void vi.unstubAllEnvs());

describe('skillpin check', () => {
  it('reports every skill and problem as JSON and exits 1 on errors', async () => {
    const result = await cli('check', catalog.gitdir, '--paths', 'skills', '--json');
    expect(result.status).toBe(1);
    const report = JSON.parse(result.stdout) as CheckReport;
    expect(report.commit).toBe(c2);
    expect(report.repository).toBe(`local:${catalog.gitdir}`);
    expect(report.skills.map((s) => [s.name, s.servedPath, s.files])).toEqual([
      ['changelog-writer', 'skills/changelog-writer', 1],
      ['data-pipeline', 'skills/data-pipeline', 3],
      ['validate-rows', 'skills/data-pipeline/stages/validate-rows', 2],
      ['git-commit-style', 'skills/git-commit-style', 1],
      ['pdf-forms', 'skills/pdf-forms', 3],
      ['release-notes', 'skills/release-notes', 4],
      ['vercel-composition-patterns', 'skills/vercel-composition-patterns', 1],
    ]);
    expect(report.skills[0]!.uri).toBe(uriOf('changelog-writer'));
    expect(report.problems.map((p) => [p.path, p.reason, p.severity])).toEqual([
      ['skills/Bad_Name/SKILL.md', 'name-invalid', 'error'],
      ['skills/composition-patterns/SKILL.md', 'name-mismatch', 'warning'],
      ['skills/no-description/SKILL.md', 'description-missing', 'error'],
      ['skills/no-frontmatter/SKILL.md', 'frontmatter-missing', 'error'],
    ]);
    expect([report.errors, report.warnings, report.ok]).toEqual([3, 1, false]);
    expect(result.stderr).toBe('');
  });

  it('checks a given commit or ref, and exits 0 when nothing is wrong', async () => {
    expect((await cli('check', fixture('root-skill').gitdir)).status).toBe(0);
    const atTag = await cli('check', catalog.gitdir, '--ref', 'v1', '--json');
    expect((JSON.parse(atTag.stdout) as CheckReport).commit).toBe(c1);
    const atCommit = await cli('check', catalog.gitdir, '--commit', c1, '--json');
    expect((JSON.parse(atCommit.stdout) as CheckReport).commit).toBe(c1);
  });

  it('fails on warnings only under --strict', async () => {
    const links = fixture('symlinks');
    const relaxed = await cli('check', links.gitdir, '--json');
    const report = JSON.parse(relaxed.stdout) as CheckReport;
    expect(report.problems.map((p) => p.reason)).toEqual(['symlink-outside-skill']);
    expect(relaxed.status).toBe(0);
    expect((await cli('check', links.gitdir, '--strict')).status).toBe(1);
  });

  it('prints a human report naming each problem', async () => {
    const result = await cli('check', catalog.gitdir, '--paths', 'skills');
    expect(result.stdout.split('\n').slice(0, 2)).toEqual([
      `local:${catalog.gitdir} @ ${c2} (2024-03-08T16:30:00.000Z)`,
      '7 skills served, 3 errors, 1 warning',
    ]);
    expect(result.stdout).toContain('error    description-missing     skills/no-description/SKILL.md:1');
  });

  it('exits 2 when the repository cannot be read, 64 on a usage error', async () => {
    const missing = await cli('check', tempDir('skillpin-not-a-repo-'));
    expect([missing.status, missing.stderr]).toEqual([2, expect.stringContaining('source-not-a-repository')]);
    const short = await cli('check', catalog.gitdir, '--commit', 'abc');
    expect([short.status, short.stderr]).toEqual([
      64,
      'skillpin check: --commit must be a commit id: 4 to 40 hex digits\n',
    ]);
    const both = await cli('check', catalog.gitdir, '--commit', c1, '--ref', 'main');
    expect([both.status, both.stderr.split('\n')[0]]).toEqual([
      64,
      "error: option '--commit <sha>' cannot be used with option '--ref <ref>'",
    ]);
    const unknown = await cli('check', catalog.gitdir, '--commit', 'f'.repeat(40), '--json');
    expect([unknown.status, JSON.parse(unknown.stdout)]).toEqual([
      2,
      { version: 1, error: { reason: 'source-commit-not-found', detail: expect.any(String) } },
    ]);
  });

  describe('a remote repository', () => {
    let server: GitHttpServer;
    beforeAll(async () => {
      const root = tempDir('skillpin-check-remote-');
      git(['clone', '--quiet', '--bare', catalog.gitdir, path.join(root, 'catalog.git')]);
      server = await startGitHttpServer({ root });
    });
    afterAll(async () => server.close());

    it('is fetched at the ref and checked', async () => {
      const url = server.urlFor('catalog.git');
      const result = await cli('check', url, '--ref', 'v1', '--paths', 'skills', '--json');
      const report = JSON.parse(result.stdout) as CheckReport;
      expect([result.status, report.commit, report.repository, report.skills.length]).toEqual([
        1,
        c1,
        url,
        6,
      ]);
    });
  });
});

describe('skillpin check: a typo never passes', () => {
  it('reports a --paths entry absent from the commit (paths-not-found) and exits 1', async () => {
    const result = await cli(
      'check',
      catalog.gitdir,
      '--paths',
      'skills/pdf-forms',
      'skills/typo',
      'skilz',
      '--json',
    );
    const report = JSON.parse(result.stdout) as CheckReport;
    expect(result.status).toBe(1);
    expect(report.skills.map((s) => s.name)).toEqual(['pdf-forms']);
    expect(report.problems.map((p) => [p.path, p.reason, p.detail])).toEqual([
      [
        'skills/typo',
        'paths-not-found',
        'paths names "skills/typo", which is not in this commit, so no skill is searched for there',
      ],
      [
        'skilz',
        'paths-not-found',
        'paths names "skilz", which is not in this commit, so no skill is searched for there; did you mean "skills"?',
      ],
    ]);
  });

  it('names a folder that does not exist as it was given, and where it was looked for', async () => {
    expect(await cli('check', 'no-such-folder/skills')).toEqual({
      status: 2,
      stdout: '',
      stderr: `skillpin check: source-not-a-repository: no-such-folder/skills does not exist (looked for ${path.resolve('no-such-folder/skills')})\n`,
    });
  });

  it('validates --paths exactly as the config does', async () => {
    for (const bad of ['../x', '/etc', 'skills/../..'])
      expect(await cli('check', catalog.gitdir, '--paths', bad)).toEqual({
        status: 64,
        stdout: '',
        stderr: `skillpin check: --paths ${JSON.stringify(bad)}: must be a folder inside the repository (relative, no "..")\n`,
      });
  });

  it('prints problems before skills, only problems with --problems-only, and GitHub annotations', async () => {
    const text = (await cli('check', catalog.gitdir, '--paths', 'skills')).stdout.split('\n');
    expect(text.indexOf('Problems:')).toBeLessThan(text.indexOf('Skills:'));
    expect(text.slice(text.indexOf('Problems:'), text.indexOf('Problems:') + 3)).toEqual([
      'Problems:',
      '  error    name-invalid            skills/Bad_Name/SKILL.md:2',
      '           name "Bad_Name" must be 1-64 characters of a-z, 0-9 and single hyphens, not starting or ending with a hyphen',
    ]);
    const only = await cli('check', catalog.gitdir, '--paths', 'skills', '--problems-only');
    expect([only.status, only.stdout.includes('Skills:'), only.stdout.includes('Problems:')]).toEqual([
      1,
      false,
      true,
    ]);
    const github = await cli('check', catalog.gitdir, '--paths', 'skills', '--format', 'github');
    expect(github.status).toBe(1);
    // The repository is not below the current folder: its paths are the repository's own.
    expect(github.stdout.split('\n')).toEqual([
      '::error file=skills/Bad_Name/SKILL.md,line=2,title=name-invalid::name "Bad_Name" must be 1-64 characters of a-z, 0-9 and single hyphens, not starting or ending with a hyphen',
      '::warning file=skills/composition-patterns/SKILL.md,line=2,title=name-mismatch::name "vercel-composition-patterns" differs from the folder "composition-patterns"; served as skills/vercel-composition-patterns',
      '::error file=skills/no-description/SKILL.md,line=1,title=description-missing::the frontmatter has no "description"',
      '::error file=skills/no-frontmatter/SKILL.md,line=1,title=frontmatter-missing::SKILL.md must begin with a "---" line',
      `local:${catalog.gitdir} @ ${c2}: 7 skills served, 3 errors, 1 warning`,
      '',
    ]);
    const failed = await cli('check', tempDir('skillpin-not-a-repo-'), '--format', 'github');
    expect([failed.status, failed.stdout]).toEqual([
      2,
      expect.stringMatching(
        /^::error title=skillpin check::.* is not a git repository \(no \.git folder, and not a bare repository\)\n$/,
      ),
    ]);
  });

  describe('in a work tree', () => {
    let repo: { dir: string; commit: string };
    beforeAll(() => {
      repo = makeRepo({
        'skills/alpha/SKILL.md': skillMd('alpha', 'one'),
        'skills/alpha/guide.md': 'guide\n',
        'README.md': 'readme\n',
      });
      writeFileSync(path.join(repo.dir, 'skills', 'alpha', 'guide.md'), 'guide, edited\n');
      writeFileSync(path.join(repo.dir, 'README.md'), 'readme, edited\n');
      mkdirSync(path.join(repo.dir, 'skills', 'beta'));
      writeFileSync(path.join(repo.dir, 'skills', 'beta', 'SKILL.md'), skillMd('beta', 'two'));
    });

    it('says it checked the commit and lists the uncommitted skill files it did not check', async () => {
      const result = await cli('check', repo.dir, '--no-worktree');
      expect(result.status).toBe(0);
      expect(result.stdout.split('\n').slice(0, 5)).toEqual([
        `local:${repo.dir} @ ${repo.commit} (${JSON.parse((await cli('check', repo.dir, '--json', '--no-worktree')).stdout).commitTime})`,
        '1 skill served, 0 errors, 0 warnings',
        `checked commit ${repo.commit.slice(0, 12)} (HEAD); 2 uncommitted skill files were not checked:`,
        '  modified   skills/alpha/guide.md',
        '  untracked  skills/beta/SKILL.md',
      ]);
    });

    it('works from a subfolder: the repository holding it is checked, named from there', async () => {
      const result = await cli('check', path.join(repo.dir, 'skills', 'alpha'), '--json', '--ref', 'HEAD');
      const report = JSON.parse(result.stdout) as CheckReport;
      expect([result.status, report.commit, report.skills.map((s) => s.uri)]).toEqual([
        0,
        repo.commit,
        [`skill://${path.basename(repo.dir).toLowerCase()}/${repo.commit}/skills/alpha/SKILL.md`],
      ]);
      expect(report.repository).toBe(`local:${path.relative(process.cwd(), repo.dir)}`);
      expect(report.uncommitted).toEqual([
        { path: 'skills/alpha/guide.md', change: 'modified' },
        { path: 'skills/beta/SKILL.md', change: 'untracked' },
      ]);
    });

    it('says so when the repository has no commit yet', async () => {
      const empty = tempDir('skillpin-empty-');
      git(['-C', empty, 'init', '--quiet', '--initial-branch=main']);
      expect(await cli('check', empty)).toEqual({
        status: 2,
        stdout: '',
        stderr: `skillpin check: source-ref-not-found: ${empty} has no commit yet (HEAD names none): check reads committed files only; commit your skills and check again\n`,
      });
    });
  });
});

describe('first steps', () => {
  it('`skillpin` with no config here says how to get one', async () => {
    const cwd = process.cwd();
    process.chdir(tempDir('skillpin-noconfig-'));
    try {
      const result = await cli();
      expect(result.status).toBe(78);
      expect(result.stderr.split('\n').slice(0, 4)).toEqual([
        'skillpin: no skillpin.yaml in this folder. To start:',
        '  skillpin init                                write a commented starter skillpin.yaml here',
        "  skillpin serve --config <file>               serve a config's sources (stdio; --http 127.0.0.1:3917 for HTTP)",
        '  npm start                                    in a checkout of skillpin: serve the bundled example catalog',
      ]);
    } finally {
      process.chdir(cwd);
    }
  });

  it('an unknown command says so, with the one most likely meant', async () => {
    expect(await cli('chek', '.')).toEqual({
      status: 64,
      stdout: '',
      stderr:
        'skillpin: unknown command "chek"; did you mean check? (commands: serve, sync, check, lock, update, diff, verify, init, reload, status; skillpin --help)\n',
    });
  });

  it('`skillpin init` writes a commented starter config that loads, keeps an existing one, and exits 73 when it cannot write', async () => {
    const { dir } = makeRepo({ 'skills/alpha/SKILL.md': skillMd('alpha', 'one') });
    const file = path.join(dir, 'sub', 'skillpin.yaml');
    mkdirSync(path.dirname(file));
    const written = await cli('init', file);
    expect(written.status).toBe(0);
    const config = loadConfig(file);
    expect(config.sources.map((s) => [s.id, s.location])).toEqual([
      ['anthropic', { kind: 'remote', url: 'https://github.com/anthropics/skills.git' }],
      ['local', { kind: 'local', path: dir, given: '..' }],
    ]);
    expect(readFileSync(file, 'utf8')).toMatch(/^# skillpin: serves Agent Skills/);
    expect(await cli('init', file)).toEqual({
      status: 73,
      stdout: '',
      stderr: `skillpin init: ${file} exists; keeping it (--force replaces it)\n`,
    });
    const nowhere = path.join(tempDir('skillpin-init-'), 'no-such-folder', 'skillpin.yaml');
    expect(await cli('init', nowhere)).toEqual({
      status: 73,
      stdout: '',
      stderr: `skillpin init: ${nowhere} cannot be written (ENOENT)\n`,
    });
    // Outside a repository the local source is there to enable, commented out.
    const bare = path.join(tempDir('skillpin-init-'), 'skillpin.yaml');
    expect((await cli('init', bare)).status).toBe(0);
    expect(loadConfig(bare).sources.map((s) => s.id)).toEqual(['anthropic']);
    expect(readFileSync(bare, 'utf8')).toContain('  # - id: local\n');
  });
});

describe('skillpin sync', () => {
  it('syncs every source once, reports each, and exits 2 when one failed', async () => {
    const config = writeConfig({
      sources: [
        { id: 'catalog', path: catalog.gitdir, ref: 'main', paths: ['skills'] },
        { id: 'broken', path: catalog.gitdir, ref: 'no-such-branch' },
      ],
    });
    const result = await cli('sync', '--config', config);
    expect(result.status).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('catalog: indexing\n');
    expect(result.stderr).toContain(`catalog: now at ${c2}\n`);
    expect(result.stderr).toContain(
      'broken: FAILED source-ref-not-found: the repository has no ref "no-such-branch"\n',
    );
    const single = writeConfig({ sources: [{ id: 'catalog', path: catalog.gitdir, ref: 'main' }] });
    expect((await cli('sync', '--config', single)).status).toBe(0);
  });

  it('exits 78, syncing and serving nothing, when a process on dataDir defines a source id otherwise', async () => {
    const dataDir = path.join(tempDir('skillpin-shared-'), 'data');
    const serving = writeConfig({ dataDir, sources: [pinnedC2] });
    const other = writeConfig({ dataDir, sources: [{ ...pinnedC2, strictNames: true }] });
    const server = await serveInProcess(serving, { http: false });
    try {
      for (const command of ['sync', 'serve']) {
        const result = await cli(command, '--config', other);
        expect([command, result.status, result.stdout, result.stderr]).toEqual([
          command,
          78,
          '',
          expect.stringMatching(
            new RegExp(
              `^skillpin(?: sync)?: dataDir ${dataDir} is shared with skillpin serve .*"catalog".*\n$`,
            ),
          ),
        ]);
      }
    } finally {
      await server.stop();
    }
  });

  it('exits 75 when the process holding a source does not publish its sync within --wait', async () => {
    const silent = await silentRemote();
    const file = writeConfig({
      sync: { timeout: '10m' },
      sources: [{ id: 'silent', url: silent.url, ref: 'main' }],
    });
    const lease = path.join(path.dirname(file), 'data', 'leases', 'silent.json');
    const server = await serveInProcess(file);
    try {
      // The server holds the lease while its sync waits on a remote that never answers.
      await until('the server to take the lease', () => existsSync(lease));
      expect(await cli('sync', '--config', file, '--wait', '1s')).toEqual({
        status: 75,
        stdout: '',
        stderr: `silent: FAILED source-pending: skillpin serve (pid ${process.pid}) holds this source's lease and did not publish a sync in time\n`,
      });
    } finally {
      await server.stop();
      await silent.close();
    }
  });

  it('exits 78 naming the file and the key of a bad config', async () => {
    const file = writeConfig({ sources: [{ ...pinnedC2, pathz: ['x'] }] });
    const result = await cli('sync', '--config', file);
    expect([result.status, result.stdout, result.stderr]).toEqual([
      78,
      '',
      `skillpin: ${file}:8:5: sources[0]: unknown key "pathz"; did you mean "paths"?\n`,
    ]);
  });
});

describe('skillpin verify', () => {
  const SECRET = 'SKILLPIN_CLI_TEST_SECRET';
  beforeAll(() => void vi.stubEnv(SECRET, 'not-a-real-secret'));

  it('verifies every file of every skill of a config over stdio, and of a running server over HTTP', async () => {
    // The served config reads the environment (webhook.secret): the stdio child must get it.
    const config = writeConfig({ webhook: { secret: `\${${SECRET}}` }, sources: [pinnedC2] });
    const overStdio = await cli('verify', '--config', config);
    expect([overStdio.status, overStdio.stderr]).toEqual([0, '']);
    expect(overStdio.stdout.split('\n')).toEqual([
      ...C2_SKILLS.map(([skill, files]) => `ok    ${uriOf(skill)}  (${files} file${files === 1 ? '' : 's'})`),
      '7 skills, 15 files read and verified, 0 failures',
      '',
    ]);
    const server = await serveInProcess(config);
    const overHttp = await cli('verify', server.url, '--era', 'legacy', '--json');
    await server.stop();
    const report = JSON.parse(overHttp.stdout) as VerifyReport;
    expect([overHttp.status, report.ok, report.files, report.failures]).toEqual([0, true, 15, 0]);
    expect(report.skills.map((s) => [s.uri, s.files, s.ok])).toEqual(
      C2_SKILLS.map(([skill, files]) => [uriOf(skill), files, true]),
    );
  });

  it('exits 1 when a file cannot be verified, 64 with neither URL nor config, and 69 when it cannot connect', async () => {
    const config = writeConfig({ sources: [pinnedC2] });
    expect((await cli('sync', '--config', config)).status).toBe(0);
    // Tamper with the persisted index: the digest published for pdf-forms/references/FORMS.md no longer matches
    // git's bytes. (Not SKILL.md: publishing reads every SKILL.md for the search index, finds it and repairs it.)
    const indexFile = path.join(path.dirname(config), 'data', 'index', 'catalog', `${c2}.json`);
    const stored = JSON.parse(readFileSync(indexFile, 'utf8')) as {
      index: { skills: Array<{ name: string; files: Array<{ relPath: string; digest: string }> }> };
    };
    const skillMd = stored.index.skills
      .find((s) => s.name === 'pdf-forms')!
      .files.find((f) => f.relPath === 'references/FORMS.md')!;
    skillMd.digest = `sha256:${'0'.repeat(64)}`;
    writeFileSync(indexFile, JSON.stringify(stored));
    const server = await serveInProcess(config);
    const tampered = await cli('verify', server.url);
    await server.stop();
    expect(tampered.status).toBe(1);
    const lines = tampered.stdout.split('\n');
    const forms = `skill://catalog/${c2}/skills/pdf-forms/references/FORMS.md`;
    expect(lines.filter((line) => !line.startsWith('ok'))).toEqual([
      `FAIL  ${uriOf('pdf-forms')}  (3 files)`,
      `      read-failed: ${forms}: internal error reading ${forms}: stored bytes do not match the index`,
      '7 skills, 15 files read and verified, 1 failure',
      '',
    ]);
    const none = await cli('verify');
    expect([none.status, none.stderr]).toEqual([
      64,
      'skillpin verify: give the URL of a running server (skillpin verify http://127.0.0.1:3917/mcp), or --config <file> to start one over stdio and verify it\n',
    ]);
    // A server that cannot start: what it said is shown.
    const broken = writeConfig({ sources: [{ ...pinnedC2, pathz: ['x'] }] });
    const unstarted = await cli('verify', '--config', broken);
    expect(unstarted.status).toBe(69);
    expect(unstarted.stderr).toContain(
      `skillpin verify: the server it started wrote:\nskillpin: ${broken}:8:5: sources[0]: unknown key "pathz"; did you mean "paths"?`,
    );
    const unreachable = await cli('verify', 'http://127.0.0.1:9/mcp');
    expect([unreachable.status, unreachable.stderr]).toEqual([
      69,
      expect.stringMatching(/^skillpin verify: cannot connect: /),
    ]);
  });
});

describe('skillpin status and /status', () => {
  it('shows each source with its commit, problems and last error, live and from dataDir', async () => {
    const config = writeConfig({
      sources: [pinnedC2, { id: 'broken', path: catalog.gitdir, ref: 'no-such-branch' }],
    });
    const server = await serveInProcess(config);
    const live = (await (await fetch(server.url.replace('/mcp', '/status'))).json()) as {
      sources: Array<{ id: string; current: { commit: string; problems: Array<{ reason: string }> } | null }>;
      failures: Array<{ id: string; reason: string }>;
    };
    await server.stop();
    expect(
      live.sources.map((s) => [
        s.id,
        s.current?.commit ?? null,
        s.current?.problems.map((p) => p.reason) ?? null,
      ]),
    ).toEqual([
      ['catalog', c2, ['name-invalid', 'name-mismatch', 'description-missing', 'frontmatter-missing']],
      ['broken', null, null],
    ]);
    expect(live.failures.map((f) => [f.id, f.reason])).toEqual([['broken', 'source-ref-not-found']]);

    const result = await cli('status', '--config', config, '--json');
    expect(result.status).toBe(0);
    const status = JSON.parse(result.stdout) as StatusReport;
    expect(result.stdout).toBe(`${JSON.stringify(status, null, 2)}\n`);
    expect(
      status.sources.map((s) => [
        s.id,
        s.current?.commit ?? null,
        s.current?.skills ?? null,
        s.current?.problems?.length ?? null,
        s.lastError?.reason ?? null,
      ]),
    ).toEqual([
      ['catalog', c2, 7, 4, null],
      ['broken', null, null, null, 'source-ref-not-found'],
    ]);
    const human = (await cli('status', '--config', config)).stdout;
    expect(human.split('\n')[0]).toMatch(
      /^SOURCE\s+COMMIT\s+SKILLS\s+ERR\/WARN\s+RETAINED\s+LAST SYNC\s+LAST ERROR$/,
    );
    expect(human).toContain(`catalog@${c2.slice(0, 12)}  error    name-invalid`);
  });
});

// Start-up is the subject here, so these run the CLI as a process: from src/, recording every module it loads.
describe('a command loads what it uses', () => {
  /** The CLI itself: what `--version`, `--help` and a usage error may load, and nothing more. */
  const CLI_CORE = [
    'cli.ts',
    'config/duration.ts',
    'config/error.ts',
    'shared/exitCodes.ts',
    'shared/log.ts',
    'shared/text.ts',
    'shared/version.ts',
  ];
  /** Libraries that only some configurations need. */
  const HEAVY = [
    '@modelcontextprotocol/client',
    'isomorphic-git',
    'jose',
    'openpgp',
    'pino-pretty',
    'prom-client',
    '@redis/client',
  ];
  /** The environment of a child: the default git backend (auto, so the git binary), whatever this project sets. */
  const childEnv = (record: Record<string, string>) => {
    const { SKILLPIN_GIT_BACKEND: _backend, ...env } = process.env;
    return { ...env, ...record, SKILLPIN_LOG_LEVEL: 'warn' } as Record<string, string>;
  };
  const runCli = (...args: string[]) => {
    const recorded = recordedCli();
    const result = spawnSync(process.execPath, [...recorded.args, ...args], {
      encoding: 'utf8',
      env: childEnv(recorded.env),
    });
    return {
      status: result.status,
      stdout: result.stdout,
      loaded: loadedModules(recorded.env.SKILLPIN_RECORD_MODULES),
    };
  };

  it('--version, --help and a usage error load the CLI and commander: no command, no other library', () => {
    const version = runCli('--version');
    expect([version.status, version.stdout]).toEqual([0, '0.1.0\n']);
    expect(version.loaded).toEqual({ ours: CLI_CORE, packages: ['commander'] });
    const help = runCli('--help');
    expect([help.status, help.stdout.split('\n')[0]]).toEqual([0, 'Usage: skillpin [options] [command]']);
    expect(help.stdout.trimEnd().split('\n').at(-1)).toBe(
      'Exit status: 0 ok, 1 findings, 2 failed, 64 usage, 69 unavailable, 70 internal, 73 cannotCreate, 75 busy, 78 config (docs/exit-codes.md)',
    );
    expect(help.loaded).toEqual({ ours: CLI_CORE, packages: ['commander'] });
    for (const usage of [['chek'], ['check', '--nope'], ['diff']]) {
      const refused = runCli(...usage);
      expect([usage, refused.status, refused.loaded]).toEqual([
        usage,
        64,
        { ours: CLI_CORE, packages: ['commander'] },
      ]);
    }
  });

  it('check of a repository loads its command, not the other commands or the libraries it does not use', () => {
    const checked = runCli('check', catalog.gitdir, '--paths', 'skills', '--json');
    expect(checked.status).toBe(1);
    expect((JSON.parse(checked.stdout) as CheckReport).commit).toBe(c2);
    const commands = checked.loaded.ours.filter((file) => /^(commands|pins)\//.test(file));
    expect(commands).toEqual([
      'commands/annotations.ts',
      'commands/check.ts',
      'commands/checkReport.ts',
      'commands/sourceArgs.ts',
      'pins/scratch.ts',
    ]);
    expect(HEAVY.filter((name) => checked.loaded.packages.includes(name))).toEqual([]);
    // The SDK's entry builder (and the SDK's server with it) loads for a SKILL.md whose frontmatter is not plain.
    expect(checked.loaded.ours).toContain('index/hostCheck.ts');
    const plain = runCli('check', fixture('root-skill').gitdir, '--json');
    expect(plain.status).toBe(0);
    expect(plain.loaded.ours).not.toContain('index/hostCheck.ts');
    expect(plain.loaded.packages).not.toContain('@modelcontextprotocol/server');
    // Nor the config's schema: a repository checked by its path needs no config.
    expect(plain.loaded.packages).not.toContain('zod');
    expect(plain.loaded.ours.filter((file) => file.startsWith('config/'))).toEqual([
      'config/commandLine.ts',
      'config/duration.ts',
      'config/error.ts',
      'config/rules.ts',
      'config/shorthand.ts',
    ]);
  });

  it('serve over stdio, with no signature policy, metrics or run: grants, loads none of what they need', async () => {
    const recorded = recordedCli();
    const config = writeConfig({ sources: [pinnedC2] });
    const client = new Client({ name: 'skillpin-test', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [...recorded.args, 'serve', '--config', config],
        env: childEnv(recorded.env),
        stderr: 'ignore',
      }),
    );
    const { skills } = await new SkillsClient(client).list();
    // Closing stdin ends the server: its record is complete once the process is gone.
    await client.close();
    expect(skills.length).toBe(C2_SKILLS.length);
    const { ours, packages } = loadedModules(recorded.env.SKILLPIN_RECORD_MODULES);
    // The lockfile's format loads only for a config served locked (not this one); the pin commands never do.
    expect(ours.filter((file) => /^(commands|pins)\//.test(file))).toEqual([
      'commands/firstAnswer.ts',
      'commands/serve.ts',
      'commands/startFailures.ts',
      'pins/pinning.ts',
    ]);
    expect(ours).not.toContain('git/isomorphic/backend.ts');
    expect(HEAVY.filter((name) => packages.includes(name))).toEqual([]);
    // Required CommonJS is recorded too: the logger (pino) is in the record.
    expect(packages).toContain('pino');
  });
});
