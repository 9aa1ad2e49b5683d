import fsp from 'node:fs/promises';
import path from 'node:path';
import { type FrontmatterChange, fixFrontmatter } from '../skills/index.ts';
import type { CheckReport } from './check.ts';

/** Reasons `check --fix` repairs in the frontmatter. */
const FIXABLE = new Set(['name-invalid', 'name-missing', 'description-invalid']);

/** A SKILL.md `check --fix` changes: its text before and after, and whether the skill is then served. */
export interface SkillFix {
  path: string;
  before: string;
  after: string;
  changes: FrontmatterChange[];
  /** Errors of the file the fix leaves (other reasons): the skill stays refused while there are any. */
  remaining: string[];
}

/** The fixes for the refused skills of `report`, read from the work tree at `root`, and the ones it cannot fix. */
export async function fixesOf(
  root: string,
  report: CheckReport,
): Promise<{ fixes: SkillFix[]; unfixed: Array<{ path: string; detail: string }> }> {
  const errors = report.problems.filter((p) => p.severity === 'error');
  const files = [...new Set(errors.filter((p) => FIXABLE.has(p.reason)).map((p) => p.path))];
  const fixes: SkillFix[] = [];
  const unfixed: Array<{ path: string; detail: string }> = [];
  for (const file of files) {
    const folder = path.basename(path.dirname(path.join(root, file)));
    const before = await fsp.readFile(path.join(root, file), 'utf8').catch(() => undefined);
    if (before === undefined) {
      unfixed.push({ path: file, detail: 'not in the work tree' });
      continue;
    }
    const fixed = fixText(before, folder);
    if (!fixed.ok) unfixed.push({ path: file, detail: fixed.detail });
    else {
      const remaining = [
        ...new Set(errors.filter((p) => p.path === file && !FIXABLE.has(p.reason)).map((p) => p.reason)),
      ];
      fixes.push({ path: file, before, after: fixed.text, changes: fixed.changes, remaining });
    }
  }
  return { fixes, unfixed };
}

/** The fix on the file's own bytes: a BOM and CRLF line ends kept; mixed line ends are left alone. */
function fixText(before: string, folder: string) {
  const bom = before.startsWith('\uFEFF') ? '\uFEFF' : '';
  const lf = before.slice(bom.length).replaceAll('\r\n', '\n');
  const eol = before.includes('\r\n') ? '\r\n' : '\n';
  if (bom + lf.replaceAll('\n', eol) !== before)
    return { ok: false as const, detail: 'mixed line ends: fix it by hand' };
  const fixed = fixFrontmatter(lf, folder);
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

/** What `--fix` says of each skill: which it makes servable, which it cannot, for the author to read. */
export function fixSummary(
  fixes: SkillFix[],
  unfixed: Array<{ path: string; detail: string }>,
  written: boolean,
): string {
  const verb = written ? 'fixed' : 'would fix';
  const lines = fixes.map((fix) => {
    const what = fix.changes
      .map((c) =>
        c.key === 'name'
          ? `name ${JSON.stringify(c.from ?? null)} → ${JSON.stringify(c.to)}`
          : `description cut to ${[...c.to].length} characters`,
      )
      .join(', ');
    const served = fix.remaining.length === 0 ? 'servable' : `still refused: ${fix.remaining.join(', ')}`;
    return `${verb} ${fix.path}: ${what} (${served})`;
  });
  for (const skip of unfixed) lines.push(`cannot fix ${skip.path}: ${skip.detail}`);
  const servable = fixes.filter((fix) => fix.remaining.length === 0).length;
  lines.push(
    `${written ? 'made' : 'would make'} ${servable} refused skill${servable === 1 ? '' : 's'} servable`,
  );
  return `${lines.join('\n')}\n`;
}

/**
 * `check --fix`: the patch on stdout and what it would make servable on stderr; with `write`, the files edited in
 * place and what it made servable on stdout.
 */
export async function applyFixes(
  root: string,
  report: CheckReport,
  write: boolean,
  io: { out: (text: string) => void; err: (text: string) => void },
): Promise<void> {
  const { fixes, unfixed } = await fixesOf(root, report);
  if (write) {
    for (const fix of fixes) await fsp.writeFile(path.join(root, fix.path), fix.after);
    io.out(fixSummary(fixes, unfixed, true));
    return;
  }
  for (const fix of fixes) io.out(unifiedDiff(fix.path, fix.before, fix.after));
  io.err(fixSummary(fixes, unfixed, false));
}
