import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CheckReport } from '../../src/commands/check.ts';
import type { StatusReport } from '../../src/commands/status.ts';
import { fixture, PROJECT_ROOT } from '../helpers/fixtures.ts';
import { startGitHttpServer, type GitHttpServer } from '../helpers/gitHttpServer.ts';
import { CLI_ARGS, startHttp, writeConfig } from '../helpers/server.ts';

const catalog = fixture('catalog');
const c1 = catalog.commits['c1']!;
const c2 = catalog.commits['c2']!;

function cli(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  return spawnSync(process.execPath, [...CLI_ARGS, ...args], {
    cwd: PROJECT_ROOT,
    encoding: 'utf8',
    input: '',
  });
}

function cliAsync(...args: string[]): Promise<{ status: number | null; stdout: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...CLI_ARGS, ...args], {
      cwd: PROJECT_ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.once('close', (status) => resolve({ status, stdout }));
  });
}

describe('skillpin check', () => {
  it('reports every skill and problem as JSON and exits 1 on errors', () => {
    const run = cli('check', catalog.gitdir, '--paths', 'skills', '--json');
    expect(run.status).toBe(1);
    const report = JSON.parse(run.stdout) as CheckReport;
    expect(report.commit).toBe(c2);
    expect(report.repository).toBe('local:catalog.git');
    expect(report.skills.map((s) => [s.name, s.servedPath, s.files])).toEqual([
      ['changelog-writer', 'skills/changelog-writer', 1],
      ['data-pipeline', 'skills/data-pipeline', 3],
      ['validate-rows', 'skills/data-pipeline/stages/validate-rows', 2],
      ['git-commit-style', 'skills/git-commit-style', 1],
      ['pdf-forms', 'skills/pdf-forms', 3],
      ['release-notes', 'skills/release-notes', 4],
      ['vercel-composition-patterns', 'skills/vercel-composition-patterns', 1],
    ]);
    expect(report.skills[0]!.uri).toBe(`skill://catalog/${c2}/skills/changelog-writer/SKILL.md`);
    expect(report.problems.map((p) => [p.path, p.reason, p.severity])).toEqual([
      ['skills/Bad_Name/SKILL.md', 'name-invalid', 'error'],
      ['skills/composition-patterns/SKILL.md', 'name-mismatch', 'warning'],
      ['skills/no-description/SKILL.md', 'description-missing', 'error'],
      ['skills/no-frontmatter/SKILL.md', 'frontmatter-missing', 'error'],
    ]);
    expect([report.errors, report.warnings, report.ok]).toEqual([3, 1, false]);
  });

  it('checks a given commit or ref, and exits 0 when nothing is wrong', () => {
    const root = fixture('root-skill');
    expect(cli('check', root.gitdir).status).toBe(0);
    const atTag = JSON.parse(cli('check', catalog.gitdir, '--ref', 'v1', '--json').stdout) as CheckReport;
    expect(atTag.commit).toBe(c1);
    const atCommit = JSON.parse(cli('check', catalog.gitdir, '--commit', c1, '--json').stdout) as CheckReport;
    expect(atCommit.commit).toBe(c1);
  });

  it('fails on warnings only under --strict', () => {
    const links = fixture('symlinks');
    const relaxed = cli('check', links.gitdir, '--json');
    const report = JSON.parse(relaxed.stdout) as CheckReport;
    expect(report.problems.map((p) => p.reason)).toEqual(['symlink-outside-skill']);
    expect(relaxed.status).toBe(0);
    expect(cli('check', links.gitdir, '--strict').status).toBe(1);
  });

  it('prints a human report naming each problem', () => {
    const run = cli('check', catalog.gitdir, '--paths', 'skills');
    expect(run.stdout).toContain('7 skills served, 3 errors, 1 warning');
    expect(run.stdout).toContain('error    description-missing     skills/no-description/SKILL.md');
  });

  it('exits 2 on usage and I/O errors', () => {
    const notARepo = mkdtempSync(path.join(tmpdir(), 'skillpin-not-a-repo-'));
    const missing = cli('check', notARepo);
    expect([missing.status, missing.stderr]).toEqual([2, expect.stringContaining('source-not-a-repository')]);
    expect(cli('check', catalog.gitdir, '--commit', 'abc').status).toBe(2);
    expect(cli('check', catalog.gitdir, '--commit', c1, '--ref', 'main').status).toBe(2);
    const unknown = cli('check', catalog.gitdir, '--commit', 'f'.repeat(40), '--json');
    expect([unknown.status, JSON.parse(unknown.stdout)]).toEqual([
      2,
      { version: 1, error: { reason: 'source-commit-not-found', detail: expect.any(String) } },
    ]);
  });

  describe('a remote repository', () => {
    let git: GitHttpServer;
    beforeAll(async () => {
      const root = mkdtempSync(path.join(tmpdir(), 'skillpin-check-remote-'));
      spawnSync('git', ['clone', '--quiet', '--bare', catalog.gitdir, path.join(root, 'catalog.git')]);
      git = await startGitHttpServer({ root });
    });
    afterAll(async () => git.close());

    it('is fetched at the ref and checked', async () => {
      // Not spawnSync: the git server runs in this process and must keep answering.
      const run = await cliAsync(
        'check',
        git.urlFor('catalog.git'),
        '--ref',
        'v1',
        '--paths',
        'skills',
        '--json',
      );
      const report = JSON.parse(run.stdout) as CheckReport;
      expect([run.status, report.commit, report.repository, report.skills.length]).toEqual([
        1,
        c1,
        git.urlFor('catalog.git'),
        6,
      ]);
    });
  });
});

describe('skillpin sync', () => {
  it('syncs every source once, reports each, and exits 1 when one failed', () => {
    const config = writeConfig({
      sources: [
        { id: 'catalog', path: catalog.gitdir, ref: 'main', paths: ['skills'] },
        { id: 'broken', path: catalog.gitdir, ref: 'no-such-branch' },
      ],
    });
    const run = cli('sync', '--config', config);
    expect(run.status).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('catalog: indexing\n');
    expect(run.stderr).toContain(`catalog: now at ${c2}\n`);
    expect(run.stderr).toContain(
      'broken: FAILED source-ref-not-found: the repository has no ref "no-such-branch"\n',
    );
    const again = cli(
      'sync',
      '--config',
      writeConfig({ sources: [{ id: 'catalog', path: catalog.gitdir, ref: 'main' }] }),
    );
    expect(again.status).toBe(0);
  });
});

describe('skillpin verify', () => {
  it('verifies every file of every skill of a config over stdio, and of a running server over HTTP', async () => {
    const config = writeConfig({
      sources: [{ id: 'catalog', path: catalog.gitdir, commit: c2, paths: ['skills'] }],
    });
    const run = cli('verify', '--config', config);
    expect(run.status).toBe(0);
    expect(run.stdout.trim().split('\n').at(-1)).toBe('7 skills, 15 files read and verified, 0 failures');
    const server = await startHttp(config);
    const overHttp = await cliAsync('verify', server.url, '--era', 'legacy', '--json');
    await server.stop();
    const report = JSON.parse(overHttp.stdout) as { ok: boolean; files: number; skills: unknown[] };
    expect([overHttp.status, report.ok, report.files, report.skills.length]).toEqual([0, true, 15, 7]);
  });

  it('exits 1 when a file cannot be verified, and 2 when it cannot connect', async () => {
    const config = writeConfig({
      sources: [{ id: 'catalog', path: catalog.gitdir, commit: c2, paths: ['skills'] }],
    });
    expect(cli('sync', '--config', config).status).toBe(0);
    // Tamper with the persisted index: the published digest no longer matches the bytes git holds.
    const indexFile = path.join(path.dirname(config), 'data', 'index', 'catalog', `${c2}.json`);
    const stored = readFileSync(indexFile, 'utf8');
    const skillMdDigest =
      /"relPath":"SKILL.md","blob":"[0-9a-f]+","size":\d+,"digest":"(sha256:[0-9a-f]{64})"/.exec(stored)![1]!;
    writeFileSync(indexFile, stored.replace(skillMdDigest, `sha256:${'0'.repeat(64)}`));
    const run = cli('verify', '--config', config);
    expect(run.status).toBe(1);
    expect(run.stdout).toMatch(/^FAIL {2}skill:\/\/catalog\/[0-9a-f]{40}\/skills\/[a-z-/]+\/SKILL\.md/m);
    expect(run.stdout.trim().split('\n').at(-1)).toBe('7 skills, 15 files read and verified, 1 failure');
    const unreachable = cli('verify', 'http://127.0.0.1:9/mcp');
    expect([unreachable.status, unreachable.stderr]).toEqual([
      2,
      expect.stringContaining('skillpin verify: cannot connect'),
    ]);
  });
});

describe('skillpin status and /status', () => {
  it('shows each source with its commit, problems and last error, live and from dataDir', async () => {
    const config = writeConfig({
      sources: [
        { id: 'catalog', path: catalog.gitdir, commit: c2, paths: ['skills'] },
        { id: 'broken', path: catalog.gitdir, ref: 'no-such-branch' },
      ],
    });
    const server = await startHttp(config);
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

    const run = cli('status', '--config', config, '--json');
    expect(run.status).toBe(0);
    const status = JSON.parse(run.stdout) as StatusReport;
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
    const human = cli('status', '--config', config).stdout;
    expect(human.split('\n')[0]).toMatch(
      /^SOURCE\s+COMMIT\s+SKILLS\s+ERR\/WARN\s+RETAINED\s+LAST SYNC\s+LAST ERROR$/,
    );
    expect(human).toContain(`catalog@${c2.slice(0, 12)}  error    name-invalid`);
  });
});
