import { LISTED_FILE_COST, MAX_LISTED_BYTES, MAX_SKILL_FILES, MAX_SYMLINK_HOPS } from './limits.ts';
import { resolveInTree, type Resolution } from './links.ts';
import { basename, dirname, isWithin, join, relative } from './paths.ts';
import type { TreeEntry } from '../shared/tree.ts';
import { problem, type ProblemReason, type SkillProblem } from '../shared/reasons.ts';
import { closest } from '../shared/text.ts';

/** A file of a skill as discovered: where it is, and the blob it serves (a resolved symlink serves its target's). */
export interface SkillFile {
  /** Path in the repository. */
  path: string;
  /** Path relative to the skill's folder. */
  relPath: string;
  blob: string;
  /** The blob's size, where the tree listing gave it. */
  size?: number;
}

export interface DiscoveredSkill {
  /** The folder holding SKILL.md ('' for the repository root). */
  dir: string;
  /** The blob of its SKILL.md. */
  skillMd: string;
  /** Every file, nested skills' included; none when there are more than MAX_SKILL_FILES (see `fileCount`). */
  files: SkillFile[];
  /** How many files the skill holds, listed or not. */
  fileCount: number;
}

/** A folder found holding a skill, and the blob of its SKILL.md. */
interface FoundSkill {
  dir: string;
  skillMd: string;
}

export const SKILL_MD = 'SKILL.md';
/** A path below a folder named SKILL.md: that folder's path (the first such one). */
const SKILL_MD_FOLDER = /^((?:.*?\/)?SKILL\.md)\//;

const BAD_BYTES = /[\u0000-\u001f\u007f\\\uFFFD]/u;
/** The first name in a path that is `.`, `..`, or `.git` in any case. */
const DOT_NAME = /(?:^|\/)(\.\.?|\.git)(?=\/|$)/i;

/**
 * Why a path holds a name git trees allow but nothing downstream can be trusted with, or `undefined`. `.` and
 * `..` are URI dot segments (RFC 3986 §5.2.4: they resolve away, so no URI names such a file); `.git` is a
 * name git itself refuses to check out, and a host writing it could plant a repository's configuration.
 */
export function unusableName(path: string): string | undefined {
  if (BAD_BYTES.test(path)) return 'a control character, a backslash or bytes that are not UTF-8';
  const name = DOT_NAME.exec(path)?.[1];
  if (name === undefined) return undefined;
  if (name === '.' || name === '..') return `the name "${name}", which no URI can name`;
  return `the name "${name}", which git refuses to check out`;
}

/**
 * Finds every folder holding a SKILL.md (any depth, the root included) under `searchPaths`, and the files of
 * each: every entry below it, nested skills' files included (spec: nested content is supporting content). A
 * SKILL.md or a folder that is a symlink to a skill (resolved in the tree) is that skill, found once.
 */
export function discoverSkills(
  entries: readonly TreeEntry[],
  searchPaths: readonly string[] = [''],
): {
  skills: DiscoveredSkill[];
  problems: SkillProblem[];
  /** The skills would list more than MAX_LISTED_BYTES: listing stopped there, and the commit is not indexed. */
  overLimit?: true;
} {
  const problems: SkillProblem[] = [...missingPaths(entries, searchPaths)];
  // Only a symlink is followed by path: a tree without one never needs every entry by path.
  let byPath: Map<string, TreeEntry> | undefined;
  const entryAt = (path: string) =>
    (byPath ??= new Map(entries.map((entry) => [entry.path, entry]))).get(path);
  const { found, links } = skillFolders(entries, searchPaths, problems);
  found.push(...linkedSkills(links, found, entryAt, problems));
  const listed = filesOfSkills(entries, new Set(found.map(({ dir }) => dir)), entryAt, problems);
  if (listed === undefined) return { skills: [], problems, overLimit: true };
  const skills = found.map(({ dir, skillMd }) => ({ dir, skillMd, ...listed.get(dir)! }));
  return { skills, problems };
}

/**
 * Every folder under `searchPaths` holding a SKILL.md file (with that file's blob), the others reported; and the
 * symlinks there, which may lead to skills.
 */
function skillFolders(
  entries: readonly TreeEntry[],
  searchPaths: readonly string[],
  problems: SkillProblem[],
): { found: FoundSkill[]; links: TreeEntry[] } {
  const found: FoundSkill[] = [];
  const links: TreeEntry[] = [];
  const reportedFolders = new Set<string>();
  for (const entry of entries) {
    // Most paths do not hold the name at all, and are not links.
    const named = entry.path.includes(SKILL_MD);
    if (!named && entry.type !== 'symlink') continue;
    if (!searchPaths.some((dir) => isWithin(dir, entry.path))) continue;
    const folder = named ? SKILL_MD_FOLDER.exec(entry.path)?.[1] : undefined;
    if (folder !== undefined) {
      if (!reportedFolders.has(folder)) {
        reportedFolders.add(folder);
        problems.push(problem(folder, 'skill-md-not-file', 'SKILL.md is a folder; the skill is not served'));
      }
      continue;
    }
    if (entry.type === 'symlink') links.push(entry);
    else if (basename(entry.path) !== SKILL_MD) continue;
    else if (entry.type !== 'file')
      problems.push(
        problem(entry.path, 'skill-md-not-file', `SKILL.md is a ${entry.type}; the skill is not served`),
      );
    else {
      const unusable = unusableName(entry.path);
      if (unusable === undefined) found.push({ dir: dirname(entry.path), skillMd: entry.id });
      else
        problems.push(
          problem(
            entry.path,
            'skill-path-invalid',
            `the skill's path holds ${unusable}; the skill is not served`,
          ),
        );
    }
  }
  return { found, links };
}

/**
 * The skills the symlinks under the search paths lead to: a SKILL.md that is a link, or a folder that is one
 * whose SKILL.md resolves to a skill's. Each is reported (`skill-alias`); a skill they reach that was not found
 * directly (outside the search paths) is found at its own path, once. A SKILL.md link that leads nowhere a skill is
 * is reported as not served; a folder link that does not lead to a skill is not one.
 */
function linkedSkills(
  links: readonly TreeEntry[],
  direct: readonly FoundSkill[],
  entryAt: (path: string) => TreeEntry | undefined,
  problems: SkillProblem[],
): FoundSkill[] {
  const directDirs = new Set(direct.map(({ dir }) => dir));
  const added = new Map<string, FoundSkill>();
  for (const link of links) {
    const manifest = basename(link.path) === SKILL_MD;
    const resolved = resolveInTree(manifest ? link.path : join(link.path, SKILL_MD), entryAt);
    const skill = manifest ? manifestTarget(link.path, resolved, problems) : skillAt(resolved);
    if (skill === undefined) continue;
    const reached = directDirs.has(skill.dir);
    if (!reached && !added.has(skill.dir)) added.set(skill.dir, skill);
    const where = skill.dir === '' ? '.' : skill.dir;
    problems.push(
      problem(
        link.path,
        'skill-alias',
        reached
          ? `symlink to the skill ${where}: the same skill, counted once, at ${where}`
          : `symlink to the skill ${where}, which the search paths do not reach: the skill is found at ${where}`,
      ),
    );
  }
  return [...added.values()];
}

/** The skill a resolved path is the SKILL.md of: a file named SKILL.md, in a folder that can be served. */
function skillAt(resolved: Resolution): FoundSkill | undefined {
  if (resolved.kind !== 'found' || resolved.entry.type !== 'file') return undefined;
  const { path, id } = resolved.entry;
  if (basename(path) !== SKILL_MD || SKILL_MD_FOLDER.test(path) || unusableName(path) !== undefined)
    return undefined;
  return { dir: dirname(path), skillMd: id };
}

/** The skill a SKILL.md that is a symlink leads to, or `undefined` with the reason it leads to none. */
function manifestTarget(
  path: string,
  resolved: Resolution,
  problems: SkillProblem[],
): FoundSkill | undefined {
  const skill = skillAt(resolved);
  if (skill !== undefined) return skill;
  const refuse = (reason: ProblemReason, detail: string) =>
    void problems.push(problem(path, reason, `SKILL.md is a symlink ${detail}; the skill is not served`));
  if (resolved.kind === 'loop')
    refuse('skill-link-loop', `chain longer than ${MAX_SYMLINK_HOPS} hops (a loop)`);
  else if (resolved.kind === 'outside')
    refuse(
      'skill-link-outside',
      resolved.absolute
        ? `to the absolute path ${JSON.stringify(resolved.target)}`
        : `to ${JSON.stringify(resolved.target)}, which leaves the repository`,
    );
  else if (resolved.kind === 'missing')
    refuse('skill-link-dangling', `to ${JSON.stringify(resolved.target)}: nothing there in this commit`);
  else refuse('skill-md-not-file', `to ${resolved.entry.path}, which is not the SKILL.md of a skill folder`);
  return undefined;
}

/**
 * The files of each skill folder: every entry below it that can be served (the others reported), nested skills'
 * files included. A skill over MAX_SKILL_FILES files is refused whatever they are, so only its count is kept: the
 * lists cost memory in proportion to what can be served (a chain of 10,000 nested skills would otherwise list 50
 * million files). `undefined` when the lists pass MAX_LISTED_BYTES.
 */
function filesOfSkills(
  entries: readonly TreeEntry[],
  skillDirs: ReadonlySet<string>,
  entryAt: (path: string) => TreeEntry | undefined,
  problems: SkillProblem[],
): Map<string, { files: SkillFile[]; fileCount: number }> | undefined {
  const innermost = innermostIn(skillDirs);
  /** Each skill's enclosing skill. */
  const outer = new Map([...skillDirs].map((dir) => [dir, dir === '' ? undefined : innermost(dirname(dir))]));
  const of = new Map([...skillDirs].map((dir) => [dir, { files: [] as SkillFile[], fileCount: 0 }]));
  const served: Array<{ entry: TreeEntry; owner: string; blob: TreeEntry }> = [];
  for (const entry of entries) {
    const owner = innermost(dirname(entry.path));
    if (owner === undefined) continue;
    const blob = servedEntry(entry, owner, entryAt, problems);
    if (blob === undefined) continue;
    served.push({ entry, owner, blob });
    of.get(owner)!.fileCount++;
  }
  // Counts add up from the innermost skills out (an enclosing folder's path is shorter).
  for (const dir of [...skillDirs].sort((a, b) => b.length - a.length)) {
    const enclosing = outer.get(dir);
    if (enclosing !== undefined) of.get(enclosing)!.fileCount += of.get(dir)!.fileCount;
  }
  let listed = 0;
  for (const { entry, owner, blob } of served) {
    // A skill over the limit holds every skill around it over the limit too.
    for (let dir = owner as string | undefined; dir !== undefined; dir = outer.get(dir)) {
      const skill = of.get(dir)!;
      if (skill.fileCount > MAX_SKILL_FILES) break;
      listed += entry.path.length + LISTED_FILE_COST;
      if (listed > MAX_LISTED_BYTES) return undefined;
      const relPath = relative(dir, entry.path);
      skill.files.push(
        blob.size === undefined
          ? { path: entry.path, relPath, blob: blob.id }
          : { path: entry.path, relPath, blob: blob.id, size: blob.size },
      );
    }
  }
  return of;
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

/** The innermost skill folder holding what is in a folder, or `undefined`; worked out once per folder. */
function innermostIn(skillDirs: ReadonlySet<string>): (dir: string) => string | undefined {
  const known = new Map<string, string | null>();
  return (dir) => {
    // Up to the nearest folder already worked out (no recursion: a hostile tree may nest deeply).
    const unknown: string[] = [];
    let owner = known.get(dir);
    for (let at = dir; owner === undefined; ) {
      unknown.push(at);
      if (skillDirs.has(at)) owner = at;
      else if (at === '') owner = null;
      else {
        at = dirname(at);
        owner = known.get(at);
      }
    }
    for (const folder of unknown) known.set(folder, owner);
    return owner ?? undefined;
  };
}

/** The file entry whose blob a file of a skill serves, or `undefined` (and a problem) when it cannot be served. */
function servedEntry(
  entry: TreeEntry,
  skillDir: string,
  entryAt: (path: string) => TreeEntry | undefined,
  problems: SkillProblem[],
): TreeEntry | undefined {
  const leaveOut = (reason: ProblemReason, detail: string) => {
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
  if (entry.type === 'file') return entry;
  const resolved = resolveInTree(entry.path, entryAt, skillDir);
  if (resolved.kind === 'found' && resolved.entry.type === 'file') return resolved.entry;
  if (resolved.kind === 'loop')
    return leaveOut('symlink-loop', `symlink chain longer than ${MAX_SYMLINK_HOPS} hops (a loop); left out`);
  if (resolved.kind !== 'outside')
    return leaveOut(
      'symlink-dangling',
      `symlink to ${JSON.stringify(resolved.kind === 'missing' ? resolved.target : (entry.target ?? ''))}: no file there in this commit; left out`,
    );
  return leaveOut(
    'symlink-outside-skill',
    resolved.absolute
      ? `symlink to the absolute path ${JSON.stringify(resolved.target)}; left out`
      : `symlink to ${JSON.stringify(resolved.target)} leaves its skill; left out`,
  );
}
