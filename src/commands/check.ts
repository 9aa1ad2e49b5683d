import { existsSync } from 'node:fs';
import path from 'node:path';
import { SOURCE_ID_PATTERN } from '../shared/patterns.ts';
import { ConfigError } from '../config/error.ts';
import { commandLineSource } from '../config/commandLine.ts';
import type { SourceConfig } from '../config/types.ts';
import {
  GitError,
  keyringOf,
  repositoryRootOf,
  type WorktreeChange,
  worktreeChanges,
  type WorktreeTree,
  worktreeTree,
} from '../git/index.ts';
import { isWithin } from '../skills/index.ts';
import { EXIT, type ExitStatus } from '../shared/exitCodes.ts';
import type { SourceReason } from '../shared/reasons.ts';
import { plural } from '../shared/text.ts';
import { annotations, countsOf } from './annotations.ts';
import { type CheckReport, checkReportOf } from './checkReport.ts';
import { openSource, type Source } from '../sync/source.ts';
import { withScratch } from '../pins/scratch.ts';
import { COMMIT_ID, fullCommit, locationOf, UsageError, type VerifyOptions, verifyOf } from './sourceArgs.ts';

export interface CheckOptions extends VerifyOptions {
  target: string;
  commit?: string;
  ref?: string;
  paths?: string[];
  json?: boolean;
  /** `text` (the default), `json` (as `--json`), or `github`: workflow annotations a pull request shows inline. */
  format?: 'text' | 'json' | 'github';
  /** Print only the problems (text and github). */
  problemsOnly?: boolean;
  strict?: boolean;
  strictNames?: boolean;
  id?: string;
  /** Environment variable holding a token for a private remote. */
  tokenEnv?: string;
  /**
   * Check the work tree as `git add -A` would stage it (true), or HEAD (false); unset: the work tree when it has
   * changes and nothing else (a commit, a ref, signature keys) was asked.
   */
  worktree?: boolean;
  /** Print a patch fixing the names and descriptions that refuse skills (the work tree's files). */
  fix?: boolean;
  /** With `fix`: edit the files in place instead. */
  write?: boolean;
}

/** A signature the keys refuse is a finding about the commit, as a problem is; any other git failure stops the check. */
const SIGNATURE_REFUSALS: ReadonlySet<string> = new Set<SourceReason>([
  'source-unsigned',
  'source-signature-invalid',
  'source-signer-unknown',
  'source-signer-not-allowed',
  'source-signer-expired',
]);

/** A source id from a repository's name: `My_Skills.git` → `my-skills`. */
function idFrom(target: string): string {
  const name = path
    .basename(target.replace(/\/+$/, ''))
    .replace(/\.git$/, '')
    .toLowerCase()
    .replace(/[^a-z0-9.-]+/g, '-')
    .replace(/^[-.]+|[-.]+$/g, '');
  return SOURCE_ID_PATTERN.test(name) ? name : 'repo';
}

function sourceFor(options: CheckOptions): SourceConfig {
  if (options.commit !== undefined && options.ref !== undefined)
    throw new UsageError('give --commit or --ref, not both');
  if (options.commit !== undefined && !COMMIT_ID.test(options.commit))
    throw new UsageError('--commit must be a commit id: 4 to 40 hex digits');
  const id = options.id ?? idFrom(options.target === '.' ? process.cwd() : options.target);
  if (!SOURCE_ID_PATTERN.test(id))
    throw new UsageError('--id must be lowercase letters, digits, "-" and "."');
  const source = commandLineSource({
    id,
    location: locationOf(options.target, options.tokenEnv),
    paths: options.paths,
    strictNames: options.strictNames,
    verify: verifyOf(options),
  });
  const target: SourceConfig['target'] =
    options.commit !== undefined
      ? { kind: 'commit', commit: options.commit }
      : { kind: 'ref', ref: options.ref ?? 'HEAD' };
  return { ...source, target };
}

/**
 * A local target inside a work tree is checked in its repository (from a subfolder too), and named as the user
 * gave it; the default id comes from the repository's folder.
 */
async function inRepository(source: SourceConfig, options: CheckOptions): Promise<SourceConfig> {
  if (source.location.kind !== 'local') return source;
  const typed = source.location.path;
  const root = (await repositoryRootOf(typed)) ?? typed;
  const given = root === typed ? options.target : path.relative(process.cwd(), root) || '.';
  return {
    ...source,
    id: options.id ?? idFrom(root),
    location: { kind: 'local', path: root, given },
  };
}

/**
 * Whether the work tree may be checked: `asked` (`--worktree`), or `default` for a local work tree when no commit,
 * ref, signature check or `--no-worktree` was asked (it is then checked when it differs from HEAD).
 */
function worktreeWanted(source: SourceConfig, options: CheckOptions): 'asked' | 'default' | undefined {
  const committed = options.commit !== undefined || options.ref !== undefined || source.verify !== undefined;
  const workTree = source.location.kind === 'local' && existsSync(path.join(source.location.path, '.git'));
  if (options.worktree === true) {
    if (committed)
      throw new UsageError('--worktree checks the work tree: not with --commit, --ref or signature keys');
    if (!workTree)
      throw new UsageError('--worktree needs a local work tree (not a bare repository or a remote)');
    return 'asked';
  }
  return options.worktree === false || committed || !workTree ? undefined : 'default';
}

/** The id of git's empty tree (SHA-1). */
const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';

/** A snapshot of the work tree: its tree, and the scratch repository holding it and a commit of it, to index. */
interface Snapshot {
  tree: string;
  commit: string;
  repository: string;
  default: boolean;
}

/** The work tree's snapshot, made in `into`; `clean` when by default and it is HEAD's tree. */
async function snapshotOf(
  source: SourceConfig,
  wanted: 'asked' | 'default' | undefined,
  into: string,
): Promise<Snapshot | 'clean' | undefined> {
  if (wanted === undefined || source.location.kind !== 'local') return undefined;
  let snapshot: WorktreeTree;
  try {
    snapshot = await worktreeTree(source.location.path, into);
  } catch (error) {
    if (!(error instanceof GitError && error.code === 'source-unsupported')) throw error;
    // Without git on PATH the default stays HEAD (with its list of uncommitted files).
    if (wanted === 'default') return undefined;
    throw new GitError('source-unsupported', `${error.message}: commit and check HEAD with --ref HEAD`);
  }
  // Before the first commit, an empty work tree is as clean as can be (HEAD then says there is no commit yet).
  if (wanted === 'default' && snapshot.tree === (snapshot.headTree ?? EMPTY_TREE)) return 'clean';
  return { tree: snapshot.tree, commit: snapshot.commit, repository: into, default: wanted === 'default' };
}

/** The source that indexes a snapshot: its scratch repository, named as the user's work tree is. */
function snapshotSource(source: SourceConfig, snapshot: Snapshot): SourceConfig {
  const { location } = source;
  const given = location.kind === 'local' ? (location.given ?? location.path) : undefined;
  return {
    ...source,
    location: { kind: 'local', path: snapshot.repository, given },
    target: { kind: 'commit', commit: snapshot.commit },
  };
}

/** `--fix` edits a local work tree's files and prints a patch (or their names): not with JSON or annotations. */
function fixUsage(source: SourceConfig, options: CheckOptions): void {
  if (options.write && !options.fix) throw new UsageError('--write goes with --fix');
  if (!options.fix) return;
  if ((options.format ?? (options.json ? 'json' : 'text')) !== 'text')
    throw new UsageError('--fix prints a patch: not with --json or --format');
  if (source.location.kind !== 'local' || !existsSync(path.join(source.location.path, '.git')))
    throw new UsageError('--fix edits the files of a local work tree (not a bare repository or a remote)');
  if (options.commit !== undefined || options.ref !== undefined || options.worktree === false)
    throw new UsageError('--fix edits the work tree: not with --commit, --ref or --no-worktree');
}

/** Files of the work tree that differ from HEAD and belong to a skill: what a check of HEAD did not see. */
async function uncommittedOf(
  source: SourceConfig,
  options: CheckOptions,
  report: CheckReport,
): Promise<WorktreeChange[] | undefined> {
  if (source.location.kind !== 'local' || options.commit !== undefined) return undefined;
  if ((options.ref ?? 'HEAD') !== 'HEAD') return undefined;
  const changes = await worktreeChanges(source.location.path, source.paths);
  if (changes === undefined) return undefined;
  const manifest = (file: string) => file === 'SKILL.md' || file.endsWith('/SKILL.md');
  const folderOf = (file: string) => file.slice(0, Math.max(0, file.lastIndexOf('/')));
  const skillDirs = [
    ...report.skills.map((skill) => (skill.path === '.' ? '' : skill.path)),
    ...report.problems.filter((p) => manifest(p.path)).map((p) => folderOf(p.path)),
    ...changes.filter((c) => manifest(c.path)).map((c) => folderOf(c.path)),
  ];
  return changes.filter((change) => skillDirs.some((dir) => isWithin(dir, change.path)));
}

/** The human report: what was checked, the counts, then the problems, then (unless only problems) the skills. */
export function renderReport(report: CheckReport, problemsOnly = false): string {
  const lines = [
    report.worktree === undefined
      ? `${report.repository} @ ${report.commit} (${report.commitTime})`
      : `${report.repository} @ work tree, tree ${report.commit} (${report.worktree.default ? 'it has uncommitted changes: ' : ''}checked as \`git add -A\` would stage it${report.worktree.default ? '; --no-worktree checks HEAD' : ''})`,
    `${plural(report.skills.length, 'skill')} served, ${countsOf(report)}`,
    ...(report.signer === null
      ? []
      : [
          `signed by ${report.signer.identity} (${report.signer.type} ${report.signer.object}, key ${report.signer.key})`,
        ]),
  ];
  const uncommitted = report.uncommitted ?? [];
  if (uncommitted.length > 0) {
    lines.push(
      `checked commit ${report.commit.slice(0, 12)} (HEAD); ${plural(uncommitted.length, 'uncommitted skill file')} ${uncommitted.length === 1 ? 'was' : 'were'} not checked:`,
    );
    for (const change of uncommitted) lines.push(`  ${change.change.padEnd(9)}  ${change.path}`);
  }
  if (report.problems.length > 0) {
    lines.push('', 'Problems:');
    for (const p of report.problems)
      lines.push(
        `  ${p.severity.padEnd(7)}  ${p.reason.padEnd(22)}  ${p.path}${p.line === undefined ? '' : `:${p.line}`}`,
        `           ${p.detail}`,
      );
  }
  if (!problemsOnly && report.skills.length > 0) {
    lines.push('', 'Skills:');
    const width = Math.max(4, ...report.skills.map((s) => s.name.length));
    for (const skill of report.skills)
      lines.push(
        `  ${skill.name.padEnd(width)}  ${plural(skill.files, 'file').padStart(10)}  ${plural(skill.bytes, 'byte').padStart(14)}  ${skill.uri}`,
      );
  }
  return `${lines.join('\n')}\n`;
}

/** `skillpin check`: index one commit exactly as the server would and report every skill and problem. */
export async function check(
  options: CheckOptions,
  io: { out: (text: string) => void; err: (text: string) => void },
): Promise<ExitStatus> {
  const { out, err } = io;
  const format = options.format ?? (options.json ? 'json' : 'text');
  const fail = (reason: string, detail: string): ExitStatus => {
    if (format === 'json') out(`${JSON.stringify({ version: 1, error: { reason, detail } })}\n`);
    else if (format === 'github') out(annotations.failure(detail));
    else err(`skillpin check: ${reason === 'usage' ? '' : `${reason}: `}${detail}\n`);
    return reason === 'usage' ? EXIT.usage : SIGNATURE_REFUSALS.has(reason) ? EXIT.findings : EXIT.failed;
  };
  let source: SourceConfig;
  let worktree: 'asked' | 'default' | undefined;
  try {
    source = await inRepository(sourceFor(options), options);
    if (source.verify !== undefined) await keyringOf(source.verify);
    fixUsage(source, options);
    worktree = worktreeWanted(source, options);
  } catch (error) {
    if (!(error instanceof UsageError || error instanceof ConfigError)) throw error;
    return fail('usage', error.message);
  }
  return withScratch(async (dataDir) => {
    let opened: Source | undefined;
    try {
      // A short commit id is expanded in the local repository; the report names the full one.
      if (source.target.kind === 'commit') {
        const commit = await fullCommit(source.location, source.target.commit);
        source = { ...source, target: { kind: 'commit', commit } };
      }
      // The work tree is indexed through a commit object holding its tree; the report names the tree.
      const found = await snapshotOf(source, worktree, path.join(dataDir, 'worktree.git'));
      const snapshot = found === 'clean' ? undefined : found;
      const indexed = snapshot === undefined ? source : snapshotSource(source, snapshot);
      opened = openSource(indexed, { dataDir });
      const ns = await opened.load(await resolved(opened, indexed));
      const report =
        snapshot === undefined
          ? checkReportOf(ns, options.strict ?? false, source.paths)
          : {
              ...checkReportOf(
                { ...ns, commit: snapshot.tree, commitTime: new Date().toISOString() },
                options.strict ?? false,
                source.paths,
              ),
              worktree: { tree: snapshot.tree, default: snapshot.default },
            };
      // A work tree whose tree is HEAD's has nothing uncommitted: git said so, no second look is needed.
      const uncommitted =
        found === 'clean'
          ? []
          : snapshot === undefined
            ? await uncommittedOf(source, options, report)
            : undefined;
      if (uncommitted !== undefined) report.uncommitted = uncommitted;
      if (options.fix && source.location.kind === 'local') {
        const { fixWorkTree } = await import('./checkFix.ts');
        await fixWorkTree(source.location.path, indexed, ns.commit, report, options.write ?? false, io);
        return report.ok ? EXIT.ok : EXIT.findings;
      }
      if (format === 'json') out(`${JSON.stringify(report, null, 2)}\n`);
      else if (format === 'github')
        out(annotations.report(report, githubPrefix(source), options.problemsOnly));
      else out(renderReport(report, options.problemsOnly));
      return report.ok ? EXIT.ok : EXIT.findings;
    } catch (error) {
      if (!(error instanceof GitError || error instanceof UsageError)) throw error;
      return fail(error instanceof GitError ? error.code : 'usage', error.message);
    } finally {
      // Its git processes end before the scratch dataDir is removed.
      await opened?.close();
    }
  });
}

/** Resolves the target; HEAD of a repository without commits gets a message saying so. */
async function resolved(opened: Source, source: SourceConfig) {
  try {
    return await opened.resolve();
  } catch (error) {
    const head = source.target.kind === 'ref' && source.target.ref === 'HEAD';
    if (!(error instanceof GitError) || error.code !== 'source-ref-not-found' || !head) throw error;
    const where =
      source.location.kind === 'local' ? (source.location.given ?? source.location.path) : 'the remote';
    throw new GitError(
      'source-ref-not-found',
      `${where} has no commit yet (HEAD names none): check reads committed files only; commit your skills and check again`,
    );
  }
}

/** Annotation paths are relative to where the workflow runs: a work tree's folder from there, when it is below. */
function githubPrefix(source: SourceConfig): string {
  if (source.location.kind !== 'local' || !existsSync(path.join(source.location.path, '.git'))) return '';
  const relative = path.relative(process.cwd(), source.location.path);
  return relative === '' || relative.startsWith('..') ? '' : `${relative}/`;
}
