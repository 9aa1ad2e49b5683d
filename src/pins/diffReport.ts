import {
  type CommitIndex,
  diffIndexes,
  INDEX_VERSION,
  type IndexDiff,
  type SkillSummary,
} from '../index/index.ts';
import type { SkillProblem } from '../shared/reasons.ts';
import type { Signer } from '../shared/signer.ts';
import { plural } from '../shared/text.ts';

/** One end of a diff. */
export interface DiffEnd {
  commit: string;
  commitTime: string;
  /** Who signed it, when signatures were verified; `null` otherwise. */
  signer: Signer | null;
}

/** What changed in one source between two commits (`skillpin diff --json`, and each source of `update --json`). */
export interface SourceDiff extends IndexDiff {
  source: string;
  repository: string;
  /** `null` when the source is new to the lockfile. */
  from: DiffEnd | null;
  /** `null` when the source left the lockfile. */
  to: DiffEnd | null;
}

const none = (commit: string): CommitIndex => ({
  version: INDEX_VERSION,
  commit,
  commitTime: '',
  tree: '',
  skills: [],
  problems: [],
});

const endOf = (index: CommitIndex, signer?: Signer): DiffEnd => ({
  commit: index.commit,
  commitTime: index.commitTime,
  signer: signer ?? index.signer ?? null,
});

/** The diff of one source; either end may be absent (a source added to or removed from the lockfile). */
export function sourceDiff(
  source: string,
  repository: string,
  from: { index: CommitIndex; signer?: Signer } | undefined,
  to: { index: CommitIndex; signer?: Signer } | undefined,
): SourceDiff {
  const diff = diffIndexes(from?.index ?? none(''), to?.index ?? none(''));
  return {
    source,
    repository,
    from: from === undefined ? null : endOf(from.index, from.signer),
    to: to === undefined ? null : endOf(to.index, to.signer),
    ...diff,
  };
}

export const changeCount = (diff: IndexDiff) =>
  diff.skills.added.length + diff.skills.removed.length + diff.skills.changed.length;

const short = (commit: string) => commit.slice(0, 12);
const shortDigest = (digest: string) => digest.slice(0, 'sha256:'.length + 12);
const signerText = (end: DiffEnd | null) =>
  end?.signer == null ? 'unsigned or not verified' : `signed by ${end.signer.identity} (${end.signer.type})`;
const endText = (end: DiffEnd | null) =>
  end === null ? '(none)' : `${short(end.commit)} (${end.commitTime.slice(0, 10)}, ${signerText(end)})`;

/** A code span that survives any text: backticks in it get a longer fence, pipes are escaped for tables. */
function code(text: string): string {
  const fence = '`'.repeat(
    (text.match(/`+/g) ?? []).reduce((most, run) => Math.max(most, run.length), 0) + 1,
  );
  const padded = text.startsWith('`') || text.endsWith('`') ? ` ${text} ` : text;
  return `${fence}${padded.replaceAll('|', '\\|')}${fence}`;
}

const html = (text: string) =>
  text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;');

const skillCells = (skill: SkillSummary) =>
  `${code(skill.path)} | ${code(skill.name)} | ${skill.files} | ${skill.bytes} | ${code(shortDigest(skill.digest))}`;

/** Text from a repository, inert in Markdown: every ASCII punctuation mark that could start markup is escaped. */
const inert = (text: string) => text.replace(/[\\`*_{}[\]()<>#+\-.!|~&]/g, '\\$&');

const problemLine = (p: SkillProblem) =>
  `- ${p.severity} ${code(p.reason)} ${code(p.path)}: ${inert(p.detail)}`;

/** What a reviewer reads in a pull request: one section per source. */
export function renderMarkdown(diffs: readonly SourceDiff[]): string {
  const out: string[] = [];
  for (const diff of diffs) {
    out.push(`### ${code(diff.source)}: ${plural(changeCount(diff), 'skill')} changed`, '');
    out.push(`${code(diff.repository)}: ${endText(diff.from)} → ${endText(diff.to)}`, '');
    const { added, removed, changed } = diff.skills;
    if (changeCount(diff) > 0) {
      out.push('| change | skill | name | files | bytes | digest |', '| --- | --- | --- | --- | --- | --- |');
      for (const skill of added) out.push(`| added | ${skillCells(skill)} |`);
      for (const skill of removed) out.push(`| removed | ${skillCells(skill)} |`);
      for (const skill of changed)
        out.push(
          `| changed | ${code(skill.path)} | ${code(skill.to.name)} | ${skill.from.files} → ${skill.to.files} | ` +
            `${skill.from.bytes} → ${skill.to.bytes} | ${code(shortDigest(skill.from.digest))} → ${code(shortDigest(skill.to.digest))} |`,
        );
      out.push('');
    }
    for (const skill of changed) {
      const { files } = skill;
      const count = files.added.length + files.removed.length + files.changed.length;
      out.push(
        `<details><summary><code>${html(skill.path)}</code>: ${plural(count, 'file')} changed</summary>`,
        '',
      );
      out.push('| change | file | size | digest |', '| --- | --- | --- | --- |');
      for (const f of files.added)
        out.push(`| added | ${code(f.path)} | ${f.size} | ${code(shortDigest(f.digest))} |`);
      for (const f of files.removed)
        out.push(`| removed | ${code(f.path)} | ${f.size} | ${code(shortDigest(f.digest))} |`);
      for (const f of files.changed)
        out.push(
          `| changed | ${code(f.path)} | ${f.from.size} → ${f.to.size} | ` +
            `${code(shortDigest(f.from.digest))} → ${code(shortDigest(f.to.digest))} |`,
        );
      out.push('', '</details>', '');
    }
    if (diff.problems.introduced.length > 0)
      out.push('Problems introduced:', '', ...diff.problems.introduced.map(problemLine), '');
    if (diff.problems.resolved.length > 0)
      out.push('Problems resolved:', '', ...diff.problems.resolved.map(problemLine), '');
  }
  return `${out.join('\n').trimEnd()}\n`;
}

/** The terminal form: one block per source, `+` added, `-` removed, `~` changed. */
export function renderText(diffs: readonly SourceDiff[]): string {
  const out: string[] = [];
  for (const diff of diffs) {
    out.push(`${diff.source}: ${endText(diff.from)} → ${endText(diff.to)}`);
    const about = (s: Omit<SkillSummary, 'path'>) =>
      `(${s.name}, ${plural(s.files, 'file')}, ${plural(s.bytes, 'byte')})`;
    for (const skill of diff.skills.added) out.push(`  + ${skill.path}  ${about(skill)}`);
    for (const skill of diff.skills.removed) out.push(`  - ${skill.path}  ${about(skill)}`);
    for (const skill of diff.skills.changed) {
      out.push(`  ~ ${skill.path}  ${about(skill.to)}`);
      for (const f of skill.files.added) out.push(`      + ${f.path}  ${plural(f.size, 'byte')}`);
      for (const f of skill.files.removed) out.push(`      - ${f.path}  ${plural(f.size, 'byte')}`);
      for (const f of skill.files.changed)
        out.push(`      ~ ${f.path}  ${f.from.size} → ${plural(f.to.size, 'byte')}`);
    }
    if (changeCount(diff) === 0) out.push('  no skill changed');
    for (const p of diff.problems.introduced)
      out.push(`  problem introduced: ${p.severity} ${p.reason} ${p.path}`);
    for (const p of diff.problems.resolved)
      out.push(`  problem resolved: ${p.severity} ${p.reason} ${p.path}`);
  }
  return out.length === 0 ? '' : `${out.join('\n')}\n`;
}
