import type { SkillProblem } from '../shared/reasons.ts';
import { compareText } from '../shared/text.ts';
import { skillDigest } from './digest.ts';
import type { CommitIndex, IndexedFile, IndexedSkill } from './types.ts';

/** A served skill as the lockfile and diffs name it: its folder in the repository, name, size, aggregate digest. */
export interface SkillSummary {
  path: string;
  name: string;
  files: number;
  bytes: number;
  digest: string;
}

export interface FileFacts {
  /** Below the skill folder, as in the manifest. */
  path: string;
  size: number;
  digest: string;
}

export interface FileChange {
  path: string;
  from: Omit<FileFacts, 'path'>;
  to: Omit<FileFacts, 'path'>;
}

export interface SkillChange {
  path: string;
  from: Omit<SkillSummary, 'path'>;
  to: Omit<SkillSummary, 'path'>;
  files: { added: FileFacts[]; removed: FileFacts[]; changed: FileChange[] };
}

/** What changed between two indexes of one source, skill by skill. Everything is sorted by path. */
export interface IndexDiff {
  skills: { added: SkillSummary[]; removed: SkillSummary[]; changed: SkillChange[]; unchanged: number };
  problems: { introduced: SkillProblem[]; resolved: SkillProblem[] };
}

export function summaryOf(skill: IndexedSkill): SkillSummary {
  return {
    path: skill.dir === '' ? '.' : skill.dir,
    name: skill.name,
    files: skill.files.length,
    bytes: skill.bytes,
    digest: skillDigest(skill),
  };
}

const facts = (file: IndexedFile): FileFacts => ({
  path: file.relPath,
  size: file.size,
  digest: file.digest,
});

/** Keys of `from` and `to` split into removed, added and present in both, each in path order. */
function split<T>(from: Map<string, T>, to: Map<string, T>) {
  const keys = (map: Map<string, T>, not: Map<string, T>) =>
    [...map.keys()].filter((key) => !not.has(key)).sort(compareText);
  return {
    removed: keys(from, to),
    added: keys(to, from),
    both: [...from.keys()].filter((key) => to.has(key)).sort(compareText),
  };
}

function filesDiff(from: IndexedSkill, to: IndexedSkill): SkillChange['files'] {
  const before = new Map(from.files.map((file) => [file.relPath, file]));
  const after = new Map(to.files.map((file) => [file.relPath, file]));
  const keys = split(before, after);
  return {
    added: keys.added.map((key) => facts(after.get(key)!)),
    removed: keys.removed.map((key) => facts(before.get(key)!)),
    changed: keys.both.flatMap((key) => {
      const [a, b] = [before.get(key)!, after.get(key)!];
      return a.digest === b.digest
        ? []
        : [{ path: key, from: { size: a.size, digest: a.digest }, to: { size: b.size, digest: b.digest } }];
    }),
  };
}

const problemKey = (p: SkillProblem) => `${p.path}\0${p.reason}`;

/** Skills added, removed and changed between `from` and `to` (a skill is its folder), and problems that came or went. */
export function diffIndexes(from: CommitIndex, to: CommitIndex): IndexDiff {
  const before = new Map(from.skills.map((skill) => [skill.dir, skill]));
  const after = new Map(to.skills.map((skill) => [skill.dir, skill]));
  const keys = split(before, after);
  const changed: SkillChange[] = [];
  for (const key of keys.both) {
    const [a, b] = [before.get(key)!, after.get(key)!];
    if (skillDigest(a) === skillDigest(b) && a.name === b.name) continue;
    const { path: _before, ...fromSummary } = summaryOf(a);
    const { path, ...toSummary } = summaryOf(b);
    changed.push({ path, from: fromSummary, to: toSummary, files: filesDiff(a, b) });
  }
  const known = (problems: SkillProblem[]) => new Set(problems.map(problemKey));
  const [had, has] = [known(from.problems), known(to.problems)];
  return {
    skills: {
      added: keys.added.map((key) => summaryOf(after.get(key)!)),
      removed: keys.removed.map((key) => summaryOf(before.get(key)!)),
      changed,
      unchanged: keys.both.length - changed.length,
    },
    problems: {
      introduced: to.problems.filter((p) => !had.has(problemKey(p))),
      resolved: from.problems.filter((p) => !has.has(problemKey(p))),
    },
  };
}
