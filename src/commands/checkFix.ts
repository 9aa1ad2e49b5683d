import fsp from 'node:fs/promises';
import path from 'node:path';
import {
  basename,
  dirname,
  type FixTarget,
  type FrontmatterChange,
  fixFrontmatter,
  isValidName,
  join,
  kebabName,
} from '../skills/index.ts';
import { isOsError, osReason } from '../shared/fs.ts';
import { compareText } from '../shared/text.ts';
import type { CheckReport } from './checkReport.ts';
import { type SkillFix, type Unfixed, type VerifiedFix, verifyFixes } from './fixVerify.ts';
import { type PatchedIndexer, patchedIndexer } from './patchedIndex.ts';
import type { SourceConfig } from '../config/types.ts';

/** Reasons `check --fix` repairs in the frontmatter. */
const FIXABLE = new Set(['name-invalid', 'name-missing', 'description-invalid', 'frontmatter-invalid']);

/** What the fix of one SKILL.md is for: the folder that names its skill, and whether that is the repository's root. */
function targetOf(root: string, file: string): FixTarget & { dir: string } {
  const dir = dirname(file);
  const folder = dir === '' ? path.basename(root) : basename(dir);
  return { dir, root: dir === '', folder };
}

/** A skill in a folder that is not a valid name: the skill already at the path its folder's rename would take. */
function folderNote(report: CheckReport, target: FixTarget & { dir: string }): string {
  const name = kebabName(target.folder);
  if (target.root || isValidName(target.folder) || name === '') return '';
  const renamed = join(dirname(target.dir), name);
  const skill = report.skills.some((served) => served.path === renamed);
  const refused = report.problems.some((p) => p.path === `${renamed}/SKILL.md`);
  return skill || refused ? `; ${renamed} is a skill already` : '';
}

/** The fixes of the refused skills of `report`, read from the work tree at `root`, and the ones it cannot fix. */
export async function fixesOf(
  root: string,
  report: CheckReport,
): Promise<{ fixes: SkillFix[]; unfixed: Unfixed[] }> {
  const errors = report.problems.filter((p) => p.severity === 'error');
  const files = [...new Set(errors.filter((p) => FIXABLE.has(p.reason)).map((p) => p.path))];
  const fixes: SkillFix[] = [];
  const unfixed: Unfixed[] = [];
  for (const file of files) {
    const target = targetOf(root, file);
    const before = await fsp.readFile(path.join(root, file), 'utf8').catch(() => undefined);
    if (before === undefined) {
      unfixed.push({ path: file, detail: 'not in the work tree' });
      continue;
    }
    const fixed = fixText(before, target);
    if (!fixed.ok) unfixed.push({ path: file, detail: `${fixed.detail}${folderNote(report, target)}` });
    else fixes.push({ path: file, dir: target.dir, before, after: fixed.text, changes: fixed.changes });
  }
  return { fixes, unfixed };
}

/** The fix on the file's own bytes: a BOM and CRLF line ends kept; mixed line ends are left alone. */
function fixText(before: string, target: FixTarget) {
  const bom = before.startsWith('\uFEFF') ? '\uFEFF' : '';
  const lf = before.slice(bom.length).replaceAll('\r\n', '\n');
  const eol = before.includes('\r\n') ? '\r\n' : '\n';
  if (bom + lf.replaceAll('\n', eol) !== before)
    return { ok: false as const, detail: 'mixed line ends: fix it by hand' };
  const fixed = fixFrontmatter(lf, target);
  return fixed.ok ? { ...fixed, text: bom + fixed.text.replaceAll('\n', eol) } : fixed;
}

const CONTEXT = 3;

/** The lines of a text; a final line break ends the last line. */
function linesOf(text: string): string[] {
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines;
}

/** A unified diff (`git apply` takes it) of one file: one hunk around the changed lines. */
export function unifiedDiff(file: string, before: string, after: string): string {
  const a = linesOf(before);
  const b = linesOf(after);
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (
    tail < a.length - head &&
    tail < b.length - head &&
    a[a.length - 1 - tail] === b[b.length - 1 - tail]
  )
    tail++;
  const start = Math.max(0, head - CONTEXT);
  const [aStop, bStop] = [a.length - tail, b.length - tail];
  const following = a.slice(aStop, aStop + CONTEXT);
  const aCount = aStop - start + following.length;
  const bCount = head - start + (bStop - head) + following.length;
  return `${[
    `--- a/${file}`,
    `+++ b/${file}`,
    `@@ -${start + 1},${aCount} +${start + 1},${bCount} @@`,
    ...a.slice(start, head).map((line) => ` ${line}`),
    ...a.slice(head, aStop).map((line) => `-${line}`),
    ...b.slice(head, bStop).map((line) => `+${line}`),
    ...following.map((line) => ` ${line}`),
  ].join('\n')}\n`;
}

/** One change in words. */
function changeText(change: FrontmatterChange): string {
  if (change.kind === 'quote') return `quoted the value of "${change.key}" (line ${change.line}) as written`;
  return change.key === 'name'
    ? `name ${JSON.stringify(change.from ?? null)} → ${JSON.stringify(change.to)}`
    : `description cut to ${[...change.to].length} characters`;
}

/** What the index of the fixed tree says of a fixed skill. */
function verdictText(fix: VerifiedFix): string {
  if (!fix.servable)
    return `still refused: ${fix.remaining.length > 0 ? fix.remaining.join(', ') : 'not served'}`;
  return fix.revealed.length === 0 ? 'servable' : `servable; then warned of: ${fix.revealed.join(', ')}`;
}

/** What `--fix` says of each skill: which the index of the fixed tree serves, which it cannot fix and why. */
export function fixSummary(fixes: VerifiedFix[], unfixed: Unfixed[], written: boolean): string {
  const verb = written ? 'fixed' : 'would fix';
  const lines = fixes.map(
    (fix) => `${verb} ${fix.path}: ${fix.changes.map(changeText).join(', ')} (${verdictText(fix)})`,
  );
  for (const skip of [...unfixed].sort((a, b) => compareText(a.path, b.path)))
    lines.push(`cannot fix ${skip.path}: ${skip.detail}`);
  const servable = fixes.filter((fix) => fix.servable).length;
  lines.push(
    `${written ? 'made' : 'would make'} ${servable} refused skill${servable === 1 ? '' : 's'} servable`,
  );
  return `${lines.join('\n')}\n`;
}

/**
 * `check --fix`: the patch on stdout and what it would make servable on stderr; with `write`, the files edited in
 * place and what it made servable on stdout. Every fix is first checked by indexing the fixed tree in memory.
 */
export async function applyFixes(
  root: string,
  report: CheckReport,
  write: boolean,
  io: { out: (text: string) => void; err: (text: string) => void },
  indexer: PatchedIndexer,
  writeFile: (file: string, text: string) => Promise<void> = fsp.writeFile,
): Promise<void> {
  const proposed = await fixesOf(root, report);
  const verified = await verifyFixes(proposed.fixes, report, indexer);
  const unfixed = [...proposed.unfixed, ...verified.unfixed];
  const { fixes } = verified;
  if (write) {
    const written: VerifiedFix[] = [];
    for (const fix of fixes) {
      try {
        await writeFile(path.join(root, fix.path), fix.after);
        written.push(fix);
      } catch (error) {
        // The OS refusing a file (read-only, a full disk) is said of that file, not reported as a bug.
        if (!isOsError(error)) throw error;
        unfixed.push({ path: fix.path, detail: `cannot write it: ${osReason(error)}` });
      }
    }
    io.out(fixSummary(written, unfixed, true));
    return;
  }
  for (const fix of fixes) io.out(unifiedDiff(fix.path, fix.before, fix.after));
  io.err(fixSummary(fixes, unfixed, false));
}

/** `check --fix` on the work tree at `root`, `commit` being what the check indexed of it as `source`. */
export async function fixWorkTree(
  root: string,
  source: SourceConfig,
  commit: string,
  report: CheckReport,
  write: boolean,
  io: { out: (text: string) => void; err: (text: string) => void },
): Promise<void> {
  const { paths, strictNames, git } = source;
  // The commit indexed may be a snapshot of the work tree, held in a scratch repository of its own.
  const repository = source.location.kind === 'local' ? source.location.path : root;
  const indexer = await patchedIndexer(repository, commit, { paths, strictNames, git });
  try {
    await applyFixes(root, report, write, io, indexer);
  } finally {
    await indexer.close();
  }
}
