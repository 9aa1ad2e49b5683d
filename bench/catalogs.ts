/**
 * Real catalogs as they are: `check`, `check --fix` (on a scratch clone), serving and a verifying client over every
 * public skill catalog fetched onto this machine. Never in CI, and nothing fetched is committed: the catalogs live
 * in `.skillpin/catalogs/` (ignored by git), one git repository (bare or a work tree, or a symlink to one) a folder.
 *
 * Per catalog it prints: the SKILL.md files of its HEAD commit, the skills served, each problem reason with its
 * count, the fix claims `check --fix` makes ("(servable)") and how many are true after `--fix --write` (the skill is
 * served), served skills the fix unserved, problems the fix introduced, and the files a verifying client (the SDK's
 * SkillsClient, through `skillpin verify`) read and verified over HTTP from the server, with its failures.
 *
 * Usage: npm run bench:catalogs [-- [--json out.json] [--only name,name] [dir]]
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServing } from '../src/commands/serve.ts';
import { type VerifyReport, verify } from '../src/commands/verify.ts';
import { loadConfig } from '../src/config/index.ts';
import { createLogger } from '../src/shared/logger.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..');
const cli = path.join(root, 'src', 'cli.ts');

interface CheckJson {
  skills: Array<{ name: string; path: string }>;
  problems: Array<{ path: string; reason: string; severity: string }>;
}

interface CatalogResult {
  name: string;
  commit: string;
  skillMd: number;
  served: number;
  errors: number;
  warnings: number;
  infos: number;
  reasons: Record<string, number>;
  check: { exit: number; seconds: number };
  fix: {
    claims: number;
    claimsTrue: number;
    servedAfter: number;
    unserved: string[];
    introduced: Record<string, number>;
    strictExit: number;
    cannot: number;
  };
  verify: { skills: number; files: number; failures: number; seconds: number };
}

function git(args: string[], cwd?: string): string {
  const run = spawnSync('git', args, { cwd, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  if (run.status !== 0) throw new Error(`git ${args.join(' ')}: ${run.stderr}`);
  return run.stdout;
}

/** `skillpin <args>` as a user runs it, from this checkout. */
function skillpin(args: string[]): { exit: number; stdout: string; stderr: string; seconds: number } {
  const started = performance.now();
  const run = spawnSync(process.execPath, ['--import', 'tsx', cli, ...args], {
    cwd: root,
    encoding: 'utf8',
    maxBuffer: 512 * 1024 * 1024,
    env: { ...process.env, SKILLPIN_LOG_LEVEL: 'warn' },
  });
  return {
    exit: run.status ?? -1,
    stdout: run.stdout,
    stderr: run.stderr,
    seconds: (performance.now() - started) / 1000,
  };
}

function checkJson(
  target: string,
  extra: string[] = [],
): { exit: number; report: CheckJson; seconds: number } {
  const run = skillpin(['check', '--json', ...extra, target]);
  try {
    return { exit: run.exit, report: JSON.parse(run.stdout) as CheckJson, seconds: run.seconds };
  } catch {
    throw new Error(`check ${target} printed no report (exit ${run.exit}): ${run.stderr.slice(0, 2000)}`);
  }
}

function countBy<T>(items: T[], key: (item: T) => string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const item of items) counts[key(item)] = (counts[key(item)] ?? 0) + 1;
  return counts;
}

/** `check --fix`, then `--fix --write`, on a scratch clone: the claims it made, and which held. */
function fixOf(repo: string, before: CheckJson): CatalogResult['fix'] {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'skillpin-catalog-'));
  try {
    const clone = path.join(scratch, 'repo');
    git(['clone', '-q', repo, clone]);
    const preview = skillpin(['check', '--fix', clone]);
    const summary = preview.stderr.split('\n');
    const claimed = summary
      .filter((line) => /\(servable\)$/.test(line))
      .map((line) => /^would fix (.*?): /.exec(line)?.[1] ?? '');
    const cannot = summary.filter((line) => line.startsWith('cannot fix')).length;
    skillpin(['check', '--fix', '--write', clone]);
    const after = checkJson(clone, ['--worktree']).report;
    const strict = skillpin(['check', '--strict', '--worktree', clone]);
    const servedAfter = new Set(after.skills.map((s) => s.path));
    const folder = (file: string) => (path.posix.dirname(file) === '.' ? '.' : path.posix.dirname(file));
    const problemsBefore = countBy(before.problems, (p) => p.reason);
    const introduced: Record<string, number> = {};
    for (const [reason, count] of Object.entries(countBy(after.problems, (p) => p.reason)))
      if (count > (problemsBefore[reason] ?? 0)) introduced[reason] = count - (problemsBefore[reason] ?? 0);
    return {
      claims: claimed.length,
      claimsTrue: claimed.filter((file) => servedAfter.has(folder(file))).length,
      servedAfter: after.skills.length,
      unserved: before.skills.map((s) => s.path).filter((p) => !servedAfter.has(p)),
      introduced,
      strictExit: strict.exit,
      cannot,
    };
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

/** The catalog served over HTTP through the CLI's own function, read and verified by the SDK's SkillsClient. */
async function verified(repo: string, commit: string): Promise<CatalogResult['verify']> {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'skillpin-catalog-serve-'));
  const started = performance.now();
  try {
    const file = path.join(scratch, 'skillpin.yaml');
    fs.writeFileSync(
      file,
      `dataDir: ${JSON.stringify(path.join(scratch, 'data'))}\nsources:\n  - id: catalog\n    path: ${JSON.stringify(repo)}\n    commit: ${commit}\n`,
    );
    const logger = createLogger({ level: 'fatal', format: 'json' });
    const serving = await startServing(loadConfig(file, process.env), {
      logger,
      http: { host: '127.0.0.1', port: 0 },
    });
    let out = '';
    try {
      await verify({ url: serving.url, json: true }, cli, {
        out: (text) => void (out += text),
        err: (text) => void process.stderr.write(text),
      });
    } finally {
      await serving.close();
    }
    const report = JSON.parse(out) as VerifyReport;
    return {
      skills: report.skills.length,
      files: report.files,
      failures: report.failures,
      seconds: (performance.now() - started) / 1000,
    };
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

async function catalog(name: string, repo: string): Promise<CatalogResult> {
  const commit = git(['rev-parse', 'HEAD'], repo).trim();
  const skillMd = git(['ls-tree', '-r', '--name-only', 'HEAD'], repo)
    .split('\n')
    .filter((file) => file === 'SKILL.md' || file.endsWith('/SKILL.md')).length;
  const checked = checkJson(repo, ['--no-worktree']);
  const { report } = checked;
  const severities = countBy(report.problems, (p) => p.severity);
  return {
    name,
    commit,
    skillMd,
    served: report.skills.length,
    errors: severities['error'] ?? 0,
    warnings: severities['warning'] ?? 0,
    infos: severities['info'] ?? 0,
    reasons: countBy(report.problems, (p) => `${p.reason} (${p.severity})`),
    check: { exit: checked.exit, seconds: checked.seconds },
    fix: fixOf(repo, report),
    verify: await verified(repo, commit),
  };
}

function table(results: CatalogResult[]): string {
  const head = [
    'catalog',
    'commit',
    'SKILL.md',
    'served',
    'err',
    'warn',
    'info',
    'check exit',
    'fix claims',
    'true',
    'cannot fix',
    'served after fix',
    'unserved by fix',
    'introduced by fix',
    'strict after fix',
    'files verified',
    'failures',
  ];
  const rows = results.map((r) => [
    r.name,
    r.commit.slice(0, 7),
    r.skillMd,
    r.served,
    r.errors,
    r.warnings,
    r.infos,
    r.check.exit,
    r.fix.claims,
    r.fix.claimsTrue,
    r.fix.cannot,
    r.fix.servedAfter,
    r.fix.unserved.length,
    Object.entries(r.fix.introduced)
      .map(([reason, n]) => `${reason} ${n}`)
      .join(', ') || '0',
    r.fix.strictExit,
    r.verify.files,
    r.verify.failures,
  ]);
  const lines = [head, head.map(() => '---'), ...rows].map((cells) => `| ${cells.join(' | ')} |`);
  for (const r of results) {
    lines.push('', `${r.name} problems:`);
    for (const [reason, n] of Object.entries(r.reasons).sort((a, b) => b[1] - a[1]))
      lines.push(`  ${String(n).padStart(5)}  ${reason}`);
    if (r.fix.unserved.length > 0)
      lines.push(`  unserved by the fix: ${r.fix.unserved.slice(0, 10).join(', ')}`);
  }
  return `${lines.join('\n')}\n`;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const option = (flag: string) => {
    const at = args.indexOf(flag);
    return at < 0 ? undefined : args.splice(at, 2)[1];
  };
  const jsonOut = option('--json');
  const only = option('--only')?.split(',');
  const dir = path.resolve(
    args[0] ?? process.env['SKILLPIN_CATALOGS'] ?? path.join(root, '.skillpin', 'catalogs'),
  );
  if (!fs.existsSync(dir)) {
    process.stderr.write(
      `bench:catalogs: no catalogs in ${dir}: put git repositories of public skill catalogs there (one a folder, or a symlink to one)\n`,
    );
    process.exit(2);
  }
  const names = fs
    .readdirSync(dir)
    .filter((name) => only === undefined || only.includes(name))
    .sort();
  const results: CatalogResult[] = [];
  for (const name of names) {
    const repo = fs.realpathSync(path.join(dir, name));
    process.stderr.write(`${name}…\n`);
    results.push(await catalog(name, repo));
  }
  process.stdout.write(table(results));
  if (jsonOut !== undefined) fs.writeFileSync(jsonOut, `${JSON.stringify(results, null, 2)}\n`);
}

await main();
