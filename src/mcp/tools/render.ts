import { encodePath, namespaceUri, type CatalogState } from '../../catalog/index.ts';
import { SKILL_MD, type Severity } from '../../skills/index.ts';
import type { ServedSkill, Snapshot } from '../snapshot.ts';
import { oneLine } from '../../shared/text.ts';

/** From skillpin source "<id>" at commit <sha>: <uri> — the first line of every tool result about a skill. */
export function originLine(served: ServedSkill): string {
  return `From skillpin source "${served.ns.source}" at commit ${served.ns.commit}: ${served.uri}`;
}

interface ListedProblem {
  source: string;
  path: string;
  reason: string;
  severity: Severity;
}

/** One skill of skill_list's text: name, served path, description. */
export function skillLine(served: ServedSkill): string {
  return `- ${served.skill.name} [${encodePath(served.skill.servedDir)}]: ${oneLine(served.description)}`;
}

export interface ListPage {
  page: readonly ServedSkill[];
  /** Skills matching the filters, on every page. */
  total: number;
  filtered: boolean;
  /** The first page (no cursor): it carries the problems, failures and prompts. */
  first: boolean;
  nextCursor?: string;
  /** The problems listed (the first MAX_LISTED_PROBLEMS, errors first), of `problemsTotal`. */
  problems: readonly ListedProblem[];
  problemsTotal: number;
  /** Every problem, for the counts of warnings. */
  counts: readonly ListedProblem[];
  failures: CatalogState['failures'];
  prompts?: { served: number; skills: number; capped: boolean };
  /** A line under a skill naming the scripts it declares (skill_run), if any. */
  scriptsLine?: (served: ServedSkill) => string | undefined;
}

/**
 * skill_list as text, what most hosts put in front of the model: one header per source@commit carrying the
 * URI prefix, then a short line per skill; where the page sits among all; on the first page, the problems
 * without their details (structured content has them).
 */
export function renderList(list: ListPage): string {
  const lines: string[] = [];
  let header: Snapshot['ns'] | undefined;
  for (const served of list.page) {
    if (served.ns !== header) {
      header = served.ns;
      const ref = header.origin.ref === undefined ? '' : ` (${header.origin.ref})`;
      lines.push(
        `${header.source}${ref} @ ${header.commit} (URIs: ${namespaceUri(header.source, header.commit)}/<path>/${SKILL_MD}):`,
      );
    }
    lines.push(skillLine(served));
    const scripts = list.scriptsLine?.(served);
    if (scripts !== undefined) lines.push(scripts);
  }
  if (list.total === 0) lines.push(list.filtered ? 'No listed skill matches.' : 'No skill is listed.');
  else if (list.nextCursor !== undefined || !list.first) {
    const shown = list.page.length === 0 ? 'none' : `${list.page.length}`;
    lines.push(
      '',
      `${shown} of ${list.total} skills here.${list.nextCursor === undefined ? ' This is the last page.' : ` More: skill_list with cursor "${list.nextCursor}".`}`,
    );
  }
  if (!list.first) return lines.join('\n');
  const errors = list.counts.filter((p) => p.severity === 'error').length;
  const shownErrors = list.problems.filter((p) => p.severity === 'error');
  if (errors > 0)
    lines.push(
      '',
      `Not served (${errors}):`,
      ...shownErrors.map((p) => `- ${p.source}: ${p.path}: ${p.reason}`),
      ...(errors > shownErrors.length
        ? [`- and ${errors - shownErrors.length} more (skillpin check or skillpin status lists every one)`]
        : []),
    );
  // Information (skill-alias) is in the structured problems only: nothing in it needs a model's attention.
  const counts = new Map<string, number>();
  for (const p of list.counts)
    if (p.severity === 'warning') counts.set(p.reason, (counts.get(p.reason) ?? 0) + 1);
  if (counts.size > 0) {
    lines.push('', `Warnings: ${[...counts].map(([reason, n]) => `${reason} ×${n}`).join(', ')}`);
  }
  if (list.failures.length > 0)
    lines.push(
      '',
      'Sources that could not be synced:',
      ...list.failures.map((f) => `- ${f.id}: ${f.reason}: ${f.detail}`),
    );
  if (list.prompts?.capped)
    lines.push(
      '',
      `Prompts: the first ${list.prompts.served} of ${list.prompts.skills} skills have one (maxPrompts); skill_load loads any skill.`,
    );
  return lines.join('\n');
}

/** skill_load's first text block: the origin and the manifest. */
export function renderManifest(
  served: ServedSkill,
  files: ReadonlyArray<{ path: string; size: number; digest: string }>,
): string {
  const manifest = files.map((f) => `- ${f.path} (${f.size} bytes, ${f.digest})`).join('\n');
  return `${originLine(served)}\nFiles (read them with skill_file):\n${manifest}`;
}

interface FileEntry {
  path: string;
  size?: number;
  mimeType?: string;
  text?: string;
  base64?: string;
  truncated?: boolean;
  error?: string;
}

/** One text block per skill_file entry: a heading line, then the text or the base64. */
export function renderFile(entry: FileEntry): string {
  if (entry.error !== undefined) return `${entry.path}: error: ${entry.error}`;
  const heading = `${entry.path} (${entry.size} bytes, ${entry.mimeType}${entry.truncated ? ', truncated' : ''})`;
  return entry.text !== undefined ? `${heading}\n${entry.text}` : `${heading}\nbase64: ${entry.base64}`;
}
