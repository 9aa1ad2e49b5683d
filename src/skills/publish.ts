import { MAX_SOURCE_ID_LENGTH, URI_SCHEME } from '../shared/patterns.ts';
import { problem, type SkillProblem } from '../shared/reasons.ts';
import { compareText, someOf } from '../shared/text.ts';
import { encodePath } from '../shared/uriPath.ts';
import { SKILL_MD, type SkillFile } from './discover.ts';
import type { Frontmatter, FrontmatterOnly } from './frontmatter.ts';
import { MAX_SKILL_BYTES, MAX_SKILL_FILES, MAX_URI_BYTES } from './limits.ts';
import { basename, dirname, join, relative } from './paths.ts';
import { frontmatterViolations, isValidName } from './validate.ts';

/** A discovered file with its blob's size: what the limits are checked against. */
export interface SizedFile extends SkillFile {
  size: number;
}

export interface SkillCandidate {
  dir: string;
  parsed: FrontmatterOnly;
  files: SizedFile[];
  /** How many files it holds when more than `files` lists (discovery lists none past MAX_SKILL_FILES). */
  fileCount?: number;
}

/** A skill that is served: where it lives in the repository and the folder path it is served under. */
export interface PublishedSkill {
  dir: string;
  servedDir: string;
  name: string;
  frontmatter: Frontmatter;
  files: SizedFile[];
  bytes: number;
}

export interface PublishOptions {
  /** Refuse skills whose name differs from their folder instead of serving them under their name. */
  strictNames?: boolean;
}

const manifestPath = (dir: string) => join(dir, SKILL_MD);

// The longest URI prefix any source gives: skill://<64-character id>/<40-hex commit>/.
const URI_PREFIX_BYTES = URI_SCHEME.length + MAX_SOURCE_ID_LENGTH + 1 + 40 + 1;
// The most one UTF-16 unit percent-encodes to (a three-byte character: %XX%XX%XX).
const MAX_ENCODED_PER_UNIT = 9;

/** The longest URI (in bytes, with the longest source id) of a file of a skill served at `servedDir`, and its file. */
function longestUri(servedDir: string, files: readonly SizedFile[]): { bytes: number; relPath: string } {
  let longest = { bytes: 0, relPath: '' };
  for (const { relPath } of files) {
    const path = join(servedDir, relPath);
    // A path this short fits however it is encoded: most are never encoded here.
    if (URI_PREFIX_BYTES + path.length * MAX_ENCODED_PER_UNIT <= MAX_URI_BYTES) continue;
    const bytes = URI_PREFIX_BYTES + encodePath(path).length;
    if (bytes > longest.bytes) longest = { bytes, relPath };
  }
  return longest;
}

/** The folders of the candidates whose frontmatter names them validly, with that name. */
function validNames(candidates: readonly SkillCandidate[]): Map<string, string> {
  const named = new Map<string, string>();
  for (const candidate of candidates) {
    const name = candidate.parsed.ok ? candidate.parsed.frontmatter['name'] : undefined;
    if (isValidName(name)) named.set(candidate.dir, name);
  }
  return named;
}

/**
 * The path each skill folder is served under: its name as the last segment, under the served path of the
 * nearest enclosing skill (so a nested skill moves with it). Worked out once per folder.
 */
function servedDirsOf(named: ReadonlyMap<string, string>): (dir: string) => string {
  const servedDirs = new Map<string, string>();
  const servedDirOf = (dir: string): string => {
    const known = servedDirs.get(dir);
    if (known !== undefined) return known;
    let served: string;
    if (dir === '') served = named.get('') ?? '';
    else {
      let parent = dirname(dir);
      while (parent !== '' && !named.has(parent)) parent = dirname(parent);
      const folder = dirname(dir);
      const base = named.has(parent) ? join(servedDirOf(parent), relative(parent, folder)) : folder;
      served = join(base, named.get(dir) ?? basename(dir));
    }
    servedDirs.set(dir, served);
    return served;
  };
  return servedDirOf;
}

const sizeOf = (candidate: SkillCandidate) => candidate.files.reduce((sum, file) => sum + file.size, 0);

// A key that is missing is reported on the opening "---".
const lineOf = (lines: Record<string, number>, key: string) => lines[key] ?? 1;

/** What a candidate breaks of the frontmatter rules and the size limits, reported; true when it breaks any. */
function breaksRules(
  candidate: SkillCandidate,
  frontmatter: Frontmatter,
  lines: Record<string, number>,
  problems: SkillProblem[],
): boolean {
  const where = manifestPath(candidate.dir);
  const violations = frontmatterViolations(frontmatter);
  for (const violation of violations)
    problems.push(problem(where, violation.reason, violation.detail, lineOf(lines, violation.key)));
  const bytes = sizeOf(candidate);
  const fileCount = candidate.fileCount ?? candidate.files.length;
  if (fileCount > MAX_SKILL_FILES)
    problems.push(
      problem(candidate.dir || '.', 'too-many-files', `${fileCount} files; the limit is ${MAX_SKILL_FILES}`),
    );
  if (bytes > MAX_SKILL_BYTES)
    problems.push(
      problem(candidate.dir || '.', 'too-large', `${bytes} bytes; the limit is ${MAX_SKILL_BYTES}`),
    );
  return violations.length > 0 || fileCount > MAX_SKILL_FILES || bytes > MAX_SKILL_BYTES;
}

/** Never list what cannot be read: a URI too long to send names no file a client can get. */
function uriTooLong(where: string, servedDir: string, files: readonly SizedFile[]): SkillProblem | undefined {
  const uri = longestUri(servedDir, files);
  if (uri.bytes <= MAX_URI_BYTES) return undefined;
  return problem(
    where,
    'uri-too-long',
    `the URI of ${uri.relPath.slice(0, 100)}${uri.relPath.length > 100 ? '…' : ''} would be up to ` +
      `${uri.bytes} bytes; the limit is ${MAX_URI_BYTES}`,
  );
}

/** A name that is not its folder's: served under the name (a warning), or refused under strictNames. */
function nameMismatch(
  dir: string,
  name: string,
  servedDir: string,
  options: PublishOptions,
  line: number,
): SkillProblem | undefined {
  const folder = basename(dir);
  if (dir === '' || folder === name) return undefined;
  const where = manifestPath(dir);
  if (options.strictNames === true)
    return problem(
      where,
      'name-mismatch-refused',
      `name "${name}" differs from the folder "${folder}" and strictNames is on`,
      line,
    );
  return problem(
    where,
    'name-mismatch',
    `name "${name}" differs from the folder "${folder}"; served as ${servedDir}`,
    line,
  );
}

/**
 * A candidate as a served skill, or `undefined` when it is not served (its problems say why): a frontmatter that
 * does not parse or breaks the rules, a limit, a URI too long, or (with strictNames) a name that is not its folder's.
 */
function publishOne(
  candidate: SkillCandidate,
  servedDirOf: (dir: string) => string,
  options: PublishOptions,
  problems: SkillProblem[],
): PublishedSkill | undefined {
  const where = manifestPath(candidate.dir);
  if (!candidate.parsed.ok) {
    problems.push(problem(where, candidate.parsed.reason, candidate.parsed.detail, candidate.parsed.line));
    return undefined;
  }
  const { frontmatter, lines } = candidate.parsed;
  if (breaksRules(candidate, frontmatter, lines, problems)) return undefined;
  const servedDir = servedDirOf(candidate.dir);
  const tooLong = uriTooLong(where, servedDir, candidate.files);
  if (tooLong !== undefined) {
    problems.push(tooLong);
    return undefined;
  }
  const name = frontmatter['name'] as string;
  const mismatch = nameMismatch(candidate.dir, name, servedDir, options, lineOf(lines, 'name'));
  if (mismatch !== undefined) {
    problems.push(mismatch);
    if (mismatch.reason === 'name-mismatch-refused') return undefined;
  }
  return {
    dir: candidate.dir,
    servedDir,
    name,
    frontmatter,
    files: candidate.files,
    bytes: sizeOf(candidate),
  };
}

/** Skills served under one name at different paths: each is reported, hosts tell them apart by path. */
function reportDuplicateNames(skills: readonly PublishedSkill[], problems: SkillProblem[]): void {
  const byName = new Map<string, PublishedSkill[]>();
  for (const skill of skills) {
    const same = byName.get(skill.name);
    if (same === undefined) byName.set(skill.name, [skill]);
    else same.push(skill);
  }
  for (const same of byName.values()) {
    if (same.length < 2) continue;
    for (const skill of same) {
      const others = someOf(same.filter((other) => other !== skill).map((other) => other.servedDir));
      problems.push(
        problem(
          manifestPath(skill.dir),
          'duplicate-name',
          `another skill named "${skill.name}" is served at ${others}; hosts must tell them apart by path`,
        ),
      );
    }
  }
}

/**
 * Decides which skills are served and under which path. The last segment of the served path is the
 * frontmatter `name` (spec §Resource Mapping); a nested skill keeps its place under its enclosing skill's
 * served path, so every served file has exactly one served path.
 */
export function publishSkills(
  candidates: readonly SkillCandidate[],
  options: PublishOptions = {},
): { skills: PublishedSkill[]; problems: SkillProblem[] } {
  const problems: SkillProblem[] = [];
  const servedDirOf = servedDirsOf(validNames(candidates));
  const accepted: PublishedSkill[] = [];
  for (const candidate of candidates) {
    const skill = publishOne(candidate, servedDirOf, options, problems);
    if (skill !== undefined) accepted.push(skill);
  }
  const skills = refuseCollisions(accepted, servedDirOf, problems);
  reportDuplicateNames(skills, problems);
  skills.sort((a, b) => compareText(a.servedDir, b.servedDir));
  return { skills, problems };
}

/** Two real files that would be served at one path: every skill holding either is refused. */
function refuseCollisions(
  skills: PublishedSkill[],
  servedDirOf: (dir: string) => string,
  problems: SkillProblem[],
): PublishedSkill[] {
  const servedPathOf = (skill: PublishedSkill, relPath: string) => join(skill.servedDir, relPath);
  const owner = new Map<string, string>();
  const clashing = new Set<string>();
  for (const skill of skills) {
    for (const file of skill.files) {
      const served = servedPathOf(skill, file.relPath);
      const real = owner.get(served);
      if (real === undefined) owner.set(served, file.path);
      else if (real !== file.path) clashing.add(served);
    }
  }
  if (clashing.size === 0) return skills;
  // Every skill claiming each clashing path, and each skill's first clash, in one more pass over the files.
  const claimants = new Map<string, PublishedSkill[]>([...clashing].map((served) => [served, []]));
  const firstClash = new Map<PublishedSkill, string>();
  for (const skill of skills)
    for (const file of skill.files) {
      const served = servedPathOf(skill, file.relPath);
      const claiming = claimants.get(served);
      if (claiming === undefined) continue;
      if (claiming.at(-1) !== skill) claiming.push(skill);
      if (!firstClash.has(skill)) firstClash.set(skill, served);
    }
  const kept: PublishedSkill[] = [];
  for (const skill of skills) {
    const clash = firstClash.get(skill);
    if (clash === undefined) kept.push(skill);
    else {
      const others = claimants.get(clash)!.filter((other) => other !== skill);
      const withWhom = someOf(others.map((other) => other.dir || '.'));
      problems.push(
        problem(
          manifestPath(skill.dir),
          'path-collision',
          `would be served at ${servedDirOf(skill.dir)}, which ${withWhom} also claims; neither is served`,
        ),
      );
    }
  }
  return kept;
}
