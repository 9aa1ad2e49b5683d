import { MAX_SYMLINK_HOPS } from './limits.ts';
import { basename, dirname, isWithin, join, relative, resolveRelative } from './paths.ts';
import type { TreeEntry } from '../shared/tree.ts';
import { problem, type Reason, type SkillProblem } from '../shared/reasons.ts';
import { closest } from '../shared/text.ts';

/** A file of a skill as discovered: where it is, and the blob it serves (a resolved symlink serves its target's). */
export interface SkillFile {
  /** Path in the repository. */
  path: string;
  /** Path relative to the skill's folder. */
  relPath: string;
  blob: string;
}

export interface DiscoveredSkill {
  /** The folder holding SKILL.md ('' for the repository root). */
  dir: string;
  /** The blob of its SKILL.md. */
  skillMd: string;
  files: SkillFile[];
}

export const SKILL_MD = 'SKILL.md';

const BAD_BYTES = /[\u0000-\u001f\u007f\\\uFFFD]/u;

/**
 * Why a path holds a name git trees allow but nothing downstream can be trusted with, or `undefined`. `.` and
 * `..` are URI dot segments (RFC 3986 §5.2.4: they resolve away, so no URI names such a file); `.git` is a
 * name git itself refuses to check out, and a host writing it could plant a repository's configuration.
 */
export function unusableName(path: string): string | undefined {
  if (BAD_BYTES.test(path)) return 'a control character, a backslash or bytes that are not UTF-8';
  for (const name of path.split('/')) {
    if (name === '.' || name === '..') return `the name "${name}", which no URI can name`;
    if (name.toLowerCase() === '.git') return `the name "${name}", which git refuses to check out`;
  }
  return undefined;
}

/**
 * Finds every folder holding a SKILL.md (any depth, the root included) under `searchPaths`, and the files of
 * each: every entry below it, nested skills' files included (spec: nested content is supporting content).
 */
export function discoverSkills(
  entries: readonly TreeEntry[],
  searchPaths: readonly string[] = [''],
): { skills: DiscoveredSkill[]; problems: SkillProblem[] } {
  const problems: SkillProblem[] = [...missingPaths(entries, searchPaths)];
  const searched = (path: string) => searchPaths.some((dir) => isWithin(dir, path));
  const byPath = new Map(entries.map((entry) => [entry.path, entry]));
  const dirs: string[] = [];
  const reportedFolders = new Set<string>();
  for (const entry of entries) {
    if (!searched(entry.path)) continue;
    const segments = entry.path.split('/');
    const asFolder = segments.indexOf(SKILL_MD);
    if (asFolder !== -1 && asFolder < segments.length - 1) {
      const folder = segments.slice(0, asFolder + 1).join('/');
      if (!reportedFolders.has(folder)) {
        reportedFolders.add(folder);
        problems.push(problem(folder, 'skill-md-not-file', 'SKILL.md is a folder; the skill is not served'));
      }
      continue;
    }
    if (basename(entry.path) !== SKILL_MD) continue;
    if (entry.type !== 'file') {
      problems.push(
        problem(entry.path, 'skill-md-not-file', `SKILL.md is a ${entry.type}; the skill is not served`),
      );
      continue;
    }
    const unusable = unusableName(entry.path);
    if (unusable !== undefined) {
      problems.push(
        problem(
          entry.path,
          'skill-path-invalid',
          `the skill's path holds ${unusable}; the skill is not served`,
        ),
      );
      continue;
    }
    dirs.push(dirname(entry.path));
  }
  const skillDirs = new Set(dirs);
  const filesOf = new Map<string, SkillFile[]>(dirs.map((dir) => [dir, []]));
  for (const entry of entries) {
    const owners = ownersOf(entry.path, skillDirs);
    if (owners.length === 0) continue;
    const blob = servedBlob(entry, owners[0]!, byPath, problems);
    if (blob === undefined) continue;
    for (const dir of owners)
      filesOf.get(dir)!.push({ path: entry.path, relPath: relative(dir, entry.path), blob });
  }
  const skills = dirs.map((dir) => ({
    dir,
    skillMd: byPath.get(dir === '' ? SKILL_MD : `${dir}/${SKILL_MD}`)!.id,
    files: filesOf.get(dir)!,
  }));
  return { skills, problems };
}

/** A `paths` entry that names nothing in the commit is a typo until shown otherwise: nothing is searched there. */
function missingPaths(entries: readonly TreeEntry[], searchPaths: readonly string[]): SkillProblem[] {
  const missing = searchPaths.filter(
    (dir) => dir !== '' && !entries.some((entry) => isWithin(dir, entry.path)),
  );
  if (missing.length === 0) return [];
  const folders = new Set<string>();
  for (const entry of entries)
    for (let dir = dirname(entry.path); dir !== '' && !folders.has(dir); dir = dirname(dir)) folders.add(dir);
  return missing.map((dir) => {
    // A near miss of the last name, among the folders beside where it would be.
    const parent = dirname(dir);
    const siblings = [...folders].filter((folder) => dirname(folder) === parent).map(basename);
    const near = closest(basename(dir), siblings);
    const guess = near === undefined ? undefined : join(parent, near);
    return problem(
      dir,
      'paths-not-found',
      `paths names "${dir}", which is not in this commit, so no skill is searched for there` +
        (guess === undefined ? '' : `; did you mean "${guess}"?`),
    );
  });
}

/** The skill folders holding `path`, innermost first. */
function ownersOf(path: string, skillDirs: ReadonlySet<string>): string[] {
  const owners: string[] = [];
  for (let dir = dirname(path); ; dir = dirname(dir)) {
    if (skillDirs.has(dir)) owners.push(dir);
    if (dir === '') return owners;
  }
}

/** The blob a file of a skill serves, or `undefined` (and a problem) when it cannot be served. */
function servedBlob(
  entry: TreeEntry,
  skillDir: string,
  byPath: Map<string, TreeEntry>,
  problems: SkillProblem[],
): string | undefined {
  const leaveOut = (reason: Reason, detail: string) => {
    problems.push(problem(entry.path, reason, detail));
    return undefined;
  };
  const unusable = unusableName(entry.path);
  if (unusable !== undefined) return leaveOut('file-name-invalid', `the path holds ${unusable}; left out`);
  if (entry.type === 'submodule')
    return leaveOut(
      'submodule',
      `submodule at commit ${entry.id} has no content in this repository; left out`,
    );
  if (entry.type === 'file') return entry.id;
  let current = entry;
  for (let hop = 0; hop < MAX_SYMLINK_HOPS; hop++) {
    const target = current.target ?? '';
    if (target.startsWith('/'))
      return leaveOut(
        'symlink-outside-skill',
        `symlink to the absolute path ${JSON.stringify(target)}; left out`,
      );
    const resolved = resolveRelative(dirname(current.path), target);
    if (resolved === undefined || !isWithin(skillDir, resolved) || resolved === skillDir) {
      return leaveOut(
        'symlink-outside-skill',
        `symlink to ${JSON.stringify(target)} leaves its skill; left out`,
      );
    }
    const next = byPath.get(resolved);
    if (next === undefined || next.type === 'submodule')
      return leaveOut(
        'symlink-dangling',
        `symlink to ${JSON.stringify(target)}: no file there in this commit; left out`,
      );
    if (next.type === 'file') return next.id;
    current = next;
  }
  return leaveOut('symlink-loop', `symlink chain longer than ${MAX_SYMLINK_HOPS} hops (a loop); left out`);
}
