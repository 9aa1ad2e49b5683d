import { encodePath, type CatalogState } from '../../catalog/index.ts';
import { SKILL_MD } from '../../skills/index.ts';
import type { ServedSkill, Snapshot } from '../snapshot.ts';

/** From skillpin source "<id>" at commit <sha>: <uri> — the first line of every tool result about a skill. */
export function originLine(served: ServedSkill): string {
  return `From skillpin source "${served.ns.source}" at commit ${served.ns.commit}: ${served.uri}`;
}

interface ListedProblem {
  source: string;
  path: string;
  reason: string;
  severity: 'error' | 'warning';
}

/**
 * skill_list as text, what most hosts put in front of the model: one header per source@commit carrying the
 * URI prefix, then a short line per skill; problems without their details (structured content has them).
 */
export function renderList(
  groups: ReadonlyArray<{ snapshot: Snapshot; skills: readonly ServedSkill[] }>,
  filtered: boolean,
  problems: readonly ListedProblem[],
  failures: CatalogState['failures'],
  scriptsLine: (served: ServedSkill) => string | undefined = () => undefined,
): string {
  const lines: string[] = [];
  for (const group of groups) {
    if (group.skills.length === 0) continue;
    const { ns, uri } = group.snapshot;
    lines.push(`${ns.source} @ ${ns.commit} (URIs: ${uri}/<path>/${SKILL_MD}):`);
    for (const served of group.skills) {
      lines.push(`- ${served.skill.name} [${encodePath(served.skill.servedDir)}]: ${served.description}`);
      const scripts = scriptsLine(served);
      if (scripts !== undefined) lines.push(scripts);
    }
  }
  if (groups.every((group) => group.skills.length === 0))
    lines.push(filtered ? 'No listed skill matches.' : 'No skill is listed.');
  const errors = problems.filter((p) => p.severity === 'error');
  if (errors.length > 0)
    lines.push(
      '',
      `Not served (${errors.length}):`,
      ...errors.map((p) => `- ${p.source}: ${p.path}: ${p.reason}`),
    );
  if (problems.length > errors.length) {
    const counts = new Map<string, number>();
    for (const p of problems)
      if (p.severity === 'warning') counts.set(p.reason, (counts.get(p.reason) ?? 0) + 1);
    lines.push('', `Warnings: ${[...counts].map(([reason, n]) => `${reason} ×${n}`).join(', ')}`);
  }
  if (failures.length > 0)
    lines.push(
      '',
      'Sources that could not be synced:',
      ...failures.map((f) => `- ${f.id}: ${f.reason}: ${f.detail}`),
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
