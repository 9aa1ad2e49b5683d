import type { CommitIndex } from '../index/index.ts';
import {
  dirname,
  type FrontmatterChange,
  isWithin,
  parseSkillMd,
  type SkillProblem,
} from '../skills/index.ts';
import { someOf } from '../shared/text.ts';
import type { CheckReport } from './checkReport.ts';
import type { PatchedIndexer } from './patchedIndex.ts';

/** A SKILL.md `check --fix` would change: its text before and after. */
export interface SkillFix {
  path: string;
  /** The skill's folder ('' for the repository's root). */
  dir: string;
  before: string;
  after: string;
  changes: FrontmatterChange[];
}

/** A fix as the index of the fixed tree judges it. */
export interface VerifiedFix extends SkillFix {
  /** The index of the fixed tree serves the skill. */
  servable: boolean;
  /** Errors that still refuse the skill after the fix (their reasons). */
  remaining: string[];
  /** Warnings of the skill that its refusal hid until now (their reasons): the fix shows them, it does not cause them. */
  revealed: string[];
}

export interface Unfixed {
  path: string;
  detail: string;
}

/** Problems a fix may cause between skills (not of the skill itself): a fix that causes one is not proposed. */
const BETWEEN_SKILLS = new Set(['path-collision', 'duplicate-name']);

const encoder = new TextEncoder();
const keyOf = (p: { path: string; reason: string }) => `${p.path}\0${p.reason}`;
/** The problems the check found, each as its path and reason: what a fix's index is compared with. */
const problemKeys = (report: CheckReport) => new Set(report.problems.map(keyOf));
const reportPath = (dir: string) => (dir === '' ? '.' : dir);

/** Whether a problem at `path` is one of the fixed skill's own: its SKILL.md, its folder, or a file in it. */
function owns(fix: SkillFix, path: string): boolean {
  if (path === fix.path || path === reportPath(fix.dir)) return true;
  return fix.dir !== '' && path.startsWith(`${fix.dir}/`);
}

/** Where a skill at `dir` would be served under `name`: below the served path of the nearest served skill above it. */
function servedPathOf(report: CheckReport, dir: string, name: string): string {
  if (dir === '') return name;
  const parent = dirname(dir);
  const above = report.skills
    .filter((skill) => skill.path !== '.' && isWithin(skill.path, parent))
    .sort((a, b) => b.path.length - a.path.length)[0];
  const base = above === undefined ? parent : `${above.servedPath}${parent.slice(above.path.length)}`;
  return base === '' ? name : `${base}/${name}`;
}

/**
 * Fixes whose skill would be served where another skill is served, or another fix puts its skill, are not
 * proposed: the served path is worked out from the name the fix leaves and the skills served now.
 */
function withoutCollisions(fixes: SkillFix[], report: CheckReport, unfixed: Unfixed[]): SkillFix[] {
  const claims = new Map<string, SkillFix[]>();
  const targets = new Map<SkillFix, string>();
  for (const fix of fixes) {
    const read = parseSkillMd(encoder.encode(fix.after));
    const name = read.ok ? read.frontmatter['name'] : undefined;
    if (typeof name !== 'string') continue;
    const target = servedPathOf(report, fix.dir, name);
    targets.set(fix, target);
    claims.set(target, [...(claims.get(target) ?? []), fix]);
  }
  return fixes.filter((fix) => {
    const target = targets.get(fix);
    if (target === undefined) return true;
    const served = report.skills.find(
      (skill) => skill.servedPath === target && skill.path !== reportPath(fix.dir),
    );
    const other = (claims.get(target) ?? []).find((claim) => claim !== fix);
    if (served === undefined && other === undefined) return true;
    const withWhom =
      served !== undefined
        ? `${served.path}${served.path === target ? '' : ` (served as ${target})`}`
        : `${reportPath(other!.dir)}, which another fix would serve at ${target} too`;
    unfixed.push({ path: fix.path, detail: `would collide with ${withWhom}` });
    return false;
  });
}

/** A problem between skills that a fix would cause, in words. */
function causedText(fix: SkillFix, caused: SkillProblem, after: CommitIndex): string {
  const name = after.skills.find((skill) => skill.dir === fix.dir)?.name;
  const others = after.skills.filter((skill) => skill.name === name && skill.dir !== fix.dir);
  if (caused.reason === 'duplicate-name' && others.length > 0)
    return `another skill named "${name}" is served at ${someOf(others.map((skill) => reportPath(skill.dir)))}: the fix would add a duplicate-name warning to ${others.length === 1 ? 'both' : 'each'}`;
  return `with the fix, ${caused.reason}: ${caused.detail}`;
}

/** Fixes that the index of the fixed tree shows cause a problem between skills, each with why. */
function harmful(fixes: readonly SkillFix[], report: CheckReport, after: CommitIndex): Map<SkillFix, string> {
  const had = problemKeys(report);
  const found = new Map<SkillFix, string>();
  for (const fix of fixes) {
    const caused = after.problems.find(
      (p) => p.path === fix.path && BETWEEN_SKILLS.has(p.reason) && !had.has(keyOf(p)),
    );
    if (caused !== undefined) found.set(fix, causedText(fix, caused, after));
  }
  return found;
}

/** What the fixes together break outside the skills they fix, in words: a served skill lost or moved, a new problem. */
function brokenElsewhere(
  fixes: readonly SkillFix[],
  report: CheckReport,
  after: CommitIndex,
): string | undefined {
  const served = new Map(after.skills.map((skill) => [reportPath(skill.dir), skill.servedDir]));
  const lost = report.skills.find((skill) => served.get(skill.path) !== skill.servedPath);
  if (lost !== undefined) return `stop serving ${lost.path} at ${lost.servedPath}`;
  const had = problemKeys(report);
  const added = after.problems.find((p) => !had.has(keyOf(p)) && !fixes.some((fix) => owns(fix, p.path)));
  return added === undefined ? undefined : `add a ${added.reason} ${added.severity} on ${added.path}`;
}

/** The verdict on one kept fix: served or not by the fixed tree's index, and what is left of its problems. */
function judged(fix: SkillFix, report: CheckReport, after: CommitIndex): VerifiedFix {
  const had = problemKeys(report);
  const own = after.problems.filter((p) => owns(fix, p.path));
  const reasons = (severity: string, fresh: boolean) => [
    ...new Set(
      own.filter((p) => p.severity === severity && (!fresh || !had.has(keyOf(p)))).map((p) => p.reason),
    ),
  ];
  return {
    ...fix,
    servable: after.skills.some((skill) => skill.dir === fix.dir),
    remaining: reasons('error', false),
    revealed: reasons('warning', true),
  };
}

/**
 * The fixes checked against the server's own indexer on the fixed tree (in memory): a fix that would collide with
 * another skill or fix, or cause a problem between skills, is dropped and said why; and so is every fix when
 * together they would stop serving a skill served now or add a problem elsewhere. A fix is called servable only when
 * the index of the fixed tree serves its skill.
 */
export async function verifyFixes(
  proposed: SkillFix[],
  report: CheckReport,
  indexer: PatchedIndexer,
): Promise<{ fixes: VerifiedFix[]; unfixed: Unfixed[] }> {
  const unfixed: Unfixed[] = [];
  let kept = withoutCollisions(proposed, report, unfixed);
  while (kept.length > 0) {
    const after = await indexer.index(new Map(kept.map((fix) => [fix.path, encoder.encode(fix.after)])));
    let dropped = harmful(kept, report, after);
    if (dropped.size === 0) {
      const broken = brokenElsewhere(kept, report, after);
      if (broken === undefined) return { fixes: kept.map((fix) => judged(fix, report, after)), unfixed };
      dropped = new Map(kept.map((fix) => [fix, `the fixes together would ${broken}`]));
    }
    for (const [fix, detail] of dropped) unfixed.push({ path: fix.path, detail });
    kept = kept.filter((fix) => !dropped.has(fix));
  }
  return { fixes: [], unfixed };
}
