import { hash } from 'node:crypto';
import PQueue from 'p-queue';
import { GitError } from '../git/index.ts';
import {
  discoverSkills,
  isLfsPointer,
  MAX_LISTED_BYTES,
  MAX_SKILL_BYTES,
  MAX_SKILL_FILES,
  frontmatterOnly,
  parseSkillMd,
  problem,
  publishSkills,
  readDeclaration,
  type DiscoveredSkill,
  type FrontmatterOnly,
  type FrontmatterResult,
  type PublishedSkill,
  type SkillCandidate,
  type SkillProblem,
} from '../skills/index.ts';
import type { TreeEntry } from '../shared/tree.ts';
import { INDEX_VERSION, type BlobFacts, type CommitIndex, type IndexedSkill } from './types.ts';
import { compareText } from '../shared/text.ts';

/**
 * What is already known by blob id, shared across the commits of a source: unchanged blobs are not re-hashed
 * and unchanged SKILL.md files are not re-read or re-parsed.
 */
export interface IndexCache {
  blobs: Map<string, BlobFacts>;
  /** Each SKILL.md parsed, its frontmatter copied out of the text (frontmatterOnly): no text is kept here. */
  skillMd: Map<string, FrontmatterOnly>;
  /** The body of each SKILL.md read, until the search data of the commits serving it exists (forgetBodies). */
  bodies: Map<string, string>;
}

export function newIndexCache(): IndexCache {
  return { blobs: new Map(), skillMd: new Map(), bodies: new Map() };
}

/**
 * The text after the frontmatter of a SKILL.md blob that `cache` holds (it was read, hashed and parsed while
 * indexing, and no search data was built from it since), or undefined: what a reader of a commit's SKILL.md text
 * can take instead of reading the blob again.
 */
export function skillMdBodies(cache: IndexCache): (blob: string) => string | undefined {
  return (blob) => cache.bodies.get(blob);
}

/**
 * Forgets the bodies of `index`'s SKILL.md files once its search data exists: a later commit's search data reads
 * the few it needs from their blobs (the bodies of a catalog were most of what indexing kept).
 */
export function forgetBodies(cache: IndexCache, index: { skills: readonly IndexedSkill[] }): void {
  for (const skill of index.skills) for (const file of skill.files) cache.bodies.delete(file.blob);
}

/** Every blob an index serves, once each. */
export function servedBlobs(index: { skills: readonly IndexedSkill[] }): Set<string> {
  return new Set(index.skills.flatMap((skill) => skill.files.map((file) => file.blob)));
}

/**
 * Forgets what `cache` knows of blobs that `index` does not serve, so a cache kept across a source's commits stays
 * the size of one commit's skills (a catalog regenerated on every commit would otherwise grow it without end).
 */
export function keepServed(cache: IndexCache, index: CommitIndex): void {
  const served = servedBlobs(index);
  for (const id of cache.blobs.keys()) if (!served.has(id)) cache.blobs.delete(id);
  for (const id of cache.skillMd.keys()) if (!served.has(id)) cache.skillMd.delete(id);
  for (const id of cache.bodies.keys()) if (!served.has(id)) cache.bodies.delete(id);
}

/**
 * Lets go of the blob facts `cache` holds for a commit's index that is now held (packed.ts: it holds every served
 * blob's size and digest in fewer bytes): seedFacts puts them back from it when the next commit is indexed. A Git
 * LFS pointer's stay (an index does not say which blobs are pointers). At 1,000 sources of 100 skills, facts held
 * for every source took about 50 MiB after an empty start, which a warm restart never held.
 */
export function releaseFacts(cache: IndexCache): void {
  for (const [id, facts] of cache.blobs) if (facts.lfs !== true) cache.blobs.delete(id);
}

/** The facts of every blob `index` serves, into `cache` where it holds none for that blob (blob ids name bytes). */
export function seedFacts(cache: IndexCache, index: { skills: readonly IndexedSkill[] } | undefined): void {
  for (const skill of index?.skills ?? [])
    for (const { blob, size, digest } of skill.files)
      if (!cache.blobs.has(blob)) cache.blobs.set(blob, { size, digest });
}

export type ReadBlobs = (
  ids: readonly string[],
  each: (id: string, bytes: Uint8Array) => void,
) => Promise<void>;

export interface IndexInput {
  commit: string;
  commitTime: string;
  /** The commit's root tree id. */
  tree: string;
  entries: readonly TreeEntry[];
  readBlob: (id: string) => Promise<Uint8Array>;
  /**
   * Blob sizes from the objects' headers, contents not read, for the blobs whose entry carries none: a skill over
   * the limits is then refused without being read. Without it (or a size), sizes come from reading the blob.
   */
  blobSizes?: (ids: readonly string[]) => Promise<Array<number | undefined>>;
  /**
   * Reads many blobs, each handed to `each` as it arrives (a backend that streams them: `blobsReader`); without
   * it, `readBlob` reads them READ_AHEAD at a time.
   */
  readBlobs?: ReadBlobs;
  /** Folders to search for skills; default the whole repository. */
  paths?: readonly string[];
  strictNames?: boolean;
  cache?: IndexCache;
}

/** Blob reads in flight while indexing with `readBlob` (each holds its blob's bytes until it is hashed). */
export const READ_AHEAD = 32;
/** Blobs larger than this are read one at a time: memory stays READ_AHEAD small blobs and one large one. */
export const LARGE_BLOB_BYTES = 1024 * 1024;

export function digestOf(bytes: Uint8Array): string {
  // One call, no Hash object per blob (Node 20.12).
  return `sha256:${hash('sha256', bytes, 'hex')}`;
}

function factsOf(bytes: Uint8Array): BlobFacts {
  const size = bytes.byteLength;
  const digest = digestOf(bytes);
  // Two literals, not a spread: this runs once per blob.
  return isLfsPointer(bytes) ? { size, digest, lfs: true } : { size, digest };
}

/**
 * Blob sizes from the headers, for every file of every discovered skill: those the listing gave (on the files),
 * the others asked of `blobSizes` (none without it).
 */
async function sizesOf(
  input: IndexInput,
  skills: ReadonlyArray<{ files: ReadonlyArray<{ blob: string; size?: number }> }>,
): Promise<Map<string, number>> {
  const sizes = new Map<string, number>();
  const asked = new Set<string>();
  for (const skill of skills)
    for (const { blob, size } of skill.files)
      if (size !== undefined) sizes.set(blob, size);
      else asked.add(blob);
  if (input.blobSizes === undefined || asked.size === 0) return sizes;
  const ids = [...asked];
  const found = await input.blobSizes(ids);
  ids.forEach((id, i) => {
    if (found[i] !== undefined) sizes.set(id, found[i]);
  });
  return sizes;
}

/** Reads blobs with `readBlob`, a read-ahead at a time and a large one alone, each handed over as it arrives. */
function oneByOne(input: IndexInput, known: ReadonlyMap<string, number>): ReadBlobs {
  return async (ids, each) => {
    const reads = new PQueue({ concurrency: READ_AHEAD });
    const largeReads = new PQueue({ concurrency: 1 });
    await Promise.all(
      ids.map((id) =>
        ((known.get(id) ?? 0) > LARGE_BLOB_BYTES ? largeReads : reads).add(async () =>
          each(id, await input.readBlob(id)),
        ),
      ),
    );
  };
}

/**
 * What is read, once each, in order: every SKILL.md (nested ones too, for its text), then its skill's files if
 * the skill fits the extension's limits by the headers' sizes; a file whose size the headers did not give is read
 * for it. A SKILL.md over the limit is not read: `unread` holds its result.
 */
function plannedReads(
  skills: readonly DiscoveredSkill[],
  known: ReadonlyMap<string, number>,
  cache: IndexCache,
) {
  const unread = new Map<string, FrontmatterResult>();
  const wanted = new Set<string>();
  for (const skill of skills) {
    const size = known.get(skill.skillMd);
    if (size !== undefined && size > MAX_SKILL_BYTES)
      unread.set(skill.skillMd, {
        ok: false,
        reason: 'too-large',
        detail: `SKILL.md is ${size} bytes; a skill may hold ${MAX_SKILL_BYTES} (it was not read)`,
      });
    else if (!cache.skillMd.has(skill.skillMd) || !cache.blobs.has(skill.skillMd)) wanted.add(skill.skillMd);
    const fits =
      skill.fileCount <= MAX_SKILL_FILES &&
      skill.files.reduce((sum, file) => sum + (known.get(file.blob) ?? 0), 0) <= MAX_SKILL_BYTES;
    for (const file of skill.files)
      if (!cache.blobs.has(file.blob) && (fits || !known.has(file.blob)) && !unread.has(file.blob))
        wanted.add(file.blob);
  }
  return { wanted: [...wanted], unread };
}

/** Reads `wanted`: each blob is hashed as it arrives and a SKILL.md parsed; the MCP SDK's check of one runs meanwhile. */
async function readSkills(
  read: ReadBlobs,
  wanted: readonly string[],
  skillMds: ReadonlySet<string>,
  cache: IndexCache,
): Promise<void> {
  const checks: Array<Promise<unknown>> = [];
  await read(wanted, (id, bytes) => {
    if (!cache.blobs.has(id)) cache.blobs.set(id, factsOf(bytes));
    if (!skillMds.has(id) || cache.skillMd.has(id)) return;
    const parsed = parseSkillMd(bytes);
    if (parsed.ok) cache.bodies.set(id, parsed.body);
    if (!parsed.ok || parsed.plain === true) return void cache.skillMd.set(id, frontmatterOnly(parsed));
    const check = hostCheck()
      .then(({ checkedBySdk }) => checkedBySdk(bytes, parsed))
      .then((checked) => cache.skillMd.set(id, frontmatterOnly(checked)));
    // Never an unhandled rejection while the reads go on; awaited below.
    check.catch(() => undefined);
    checks.push(check);
  });
  await Promise.all(checks);
}

/** The index's form of the published skills: files in order with their facts, declarations read. */
function indexedSkills(
  published: readonly PublishedSkill[],
  factsFor: (id: string) => BlobFacts,
  problems: SkillProblem[],
): IndexedSkill[] {
  const skills: IndexedSkill[] = [];
  const pointers = new Set<string>();
  for (const skill of published) {
    const files = [];
    for (const file of skill.files) {
      const { size, digest, lfs } = factsFor(file.blob);
      files.push({ path: file.path, relPath: file.relPath, blob: file.blob, size, digest });
      if (lfs) pointers.add(file.path);
    }
    files.sort((a, b) => compareText(a.relPath, b.relPath));
    const declared = readDeclaration(
      skill.frontmatter,
      skill.dir,
      new Set(files.map((file) => file.relPath)),
    );
    problems.push(...declared.problems);
    skills.push({
      name: skill.name,
      dir: skill.dir,
      servedDir: skill.servedDir,
      frontmatter: skill.frontmatter,
      files,
      bytes: skill.bytes,
      declaration: declared.declaration,
    });
  }
  for (const path of pointers)
    problems.push(
      problem(
        path,
        'lfs-pointer',
        'a Git LFS pointer: served as the pointer text the commit holds; the large file is not in git',
      ),
    );
  return skills;
}

/**
 * The MCP SDK's entry builder (hostCheck.ts) loads with the first SKILL.md that needs it (one whose frontmatter is
 * not plain): it brings the SDK's server, which `check`, `lock` and `diff` need for nothing else.
 */
let sdkCheck: Promise<typeof import('./hostCheck.ts')> | undefined;
const hostCheck = () => (sdkCheck ??= import('./hostCheck.ts'));

/** Indexes one commit: finds its skills, hashes every blob they serve, applies the rules. */
export async function indexCommit(input: IndexInput): Promise<CommitIndex> {
  const cache = input.cache ?? newIndexCache();
  const found = discoverSkills(input.entries, input.paths?.length ? input.paths : ['']);
  if (found.overLimit)
    throw new GitError(
      'source-too-large',
      `the skills of commit ${input.commit} list more than ${MAX_LISTED_BYTES} bytes of files (nested skills list theirs again)`,
    );
  const problems: SkillProblem[] = [...found.problems];
  const known = await sizesOf(input, found.skills);
  const { wanted, unread } = plannedReads(found.skills, known, cache);
  const skillMds = new Set(found.skills.map((skill) => skill.skillMd));
  await readSkills(input.readBlobs ?? oneByOne(input, known), wanted, skillMds, cache);
  const factsFor = (id: string): BlobFacts => {
    const facts = cache.blobs.get(id);
    if (facts === undefined) throw new Error(`blob ${id} was not read`);
    return facts;
  };
  const candidates: SkillCandidate[] = found.skills.map((skill) => ({
    dir: skill.dir,
    parsed: unread.get(skill.skillMd) ?? cache.skillMd.get(skill.skillMd)!,
    fileCount: skill.fileCount,
    files: skill.files.map(({ path, relPath, blob }) => ({
      path,
      relPath,
      blob,
      size: known.get(blob) ?? factsFor(blob).size,
    })),
  }));
  const published = publishSkills(candidates, { strictNames: input.strictNames ?? false });
  problems.push(...published.problems);
  const skills = indexedSkills(published.skills, factsFor, problems);
  problems.sort((a, b) => compareText(a.path, b.path) || compareText(a.reason, b.reason));
  return {
    version: INDEX_VERSION,
    commit: input.commit,
    commitTime: input.commitTime,
    tree: input.tree,
    skills,
    problems,
  };
}
