import { skillMdUri, type Namespace } from '../catalog/index.ts';
import type { WorktreeChange } from '../git/index.ts';
import { problem, REASONS, type Severity, type SkillProblem } from '../shared/reasons.ts';
import type { Signer } from '../shared/signer.ts';

/** `skillpin check --json` output. Version 1: fields are only ever added. */
export interface CheckReport {
  version: 1;
  repository: string;
  commit: string;
  commitTime: string;
  skills: Array<{
    name: string;
    uri: string;
    path: string;
    servedPath: string;
    files: number;
    bytes: number;
  }>;
  problems: Array<{
    source: string;
    commit: string;
    path: string;
    reason: string;
    severity: Severity;
    detail: string;
    /** The line of the file (1-based), for frontmatter problems. */
    line?: number;
  }>;
  /**
   * Checking HEAD of a work tree: the files of its skills (and new SKILL.md files) that differ from the commit, which
   * the check did not see. Absent for a bare repository, a remote, or another commit.
   */
  uncommitted?: WorktreeChange[];
  /**
   * Set when the work tree was checked rather than a commit: `commit` is then the id of the tree `git write-tree`
   * gives for it, and `default` says it was checked because it had changes (no --worktree given).
   */
  worktree?: { tree: string; default: boolean };
  errors: number;
  warnings: number;
  /** Problems that are information only (`skill-alias`): they never fail a check, even under --strict. */
  infos: number;
  /** No errors (and, under --strict, no warnings). */
  ok: boolean;
  /** Who signed the commit (or its tag), when keys were given to verify it; `null` otherwise. */
  signer: Signer | null;
}

/** Where discovery finds skills, for a check that found none: a folder holding SKILL.md, at any depth. */
const LAYOUTS =
  'a skill is a folder holding SKILL.md, at any depth: the repository root (a repository that is one skill), skills/<name>/SKILL.md, .claude/skills/<name>/SKILL.md, or any other folder';

/**
 * A commit with no SKILL.md where check looked: a warning (so --strict fails) saying where that was and what a skill
 * looks like. A folder of `paths` not in the commit has its own problem (paths-not-found).
 */
function noSkillMd(ns: Namespace, paths: readonly string[]): SkillProblem[] {
  const found = ns.skills.length > 0 || ns.problems.some((p) => REASONS[p.reason].kind === 'skill');
  if (found) return [];
  if (paths.length === 0)
    return [problem('.', 'skills-not-found', `no SKILL.md anywhere in the repository; ${LAYOUTS}`)];
  const missing = new Set(ns.problems.filter((p) => p.reason === 'paths-not-found').map((p) => p.path));
  return paths
    .filter((dir) => !missing.has(dir))
    .map((dir) => problem(dir, 'skills-not-found', `no SKILL.md under ${dir}/ (--paths); ${LAYOUTS}`));
}

/** The report of a check of `ns`: its served skills and its problems, counted, `ok` as `strict` judges them. */
export function checkReportOf(ns: Namespace, strict: boolean, paths: readonly string[] = []): CheckReport {
  const problems = [...ns.problems, ...noSkillMd(ns, paths)].map((p) => ({
    source: ns.source,
    commit: ns.commit,
    ...p,
  }));
  const count = (severity: Severity) => problems.filter((p) => p.severity === severity).length;
  const errors = count('error');
  const warnings = count('warning');
  return {
    version: 1,
    repository: ns.origin.repository,
    commit: ns.commit,
    commitTime: ns.commitTime,
    skills: ns.skills.map((skill) => ({
      name: skill.name,
      uri: skillMdUri(ns.source, ns.commit, skill.servedDir),
      path: skill.dir === '' ? '.' : skill.dir,
      servedPath: skill.servedDir,
      files: skill.files.length,
      bytes: skill.bytes,
    })),
    problems,
    errors,
    warnings,
    infos: count('info'),
    ok: errors === 0 && (!strict || warnings === 0),
    signer: ns.signer ?? null,
  };
}
