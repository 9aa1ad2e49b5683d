import { createHash } from 'node:crypto';
import PQueue from 'p-queue';
import {
  discoverSkills,
  isLfsPointer,
  MAX_SKILL_BYTES,
  MAX_SKILL_FILES,
  parseSkillMd,
  problem,
  publishSkills,
  readDeclaration,
  type FrontmatterResult,
  type SkillCandidate,
  type SkillProblem,
} from '../skills/index.ts';
import type { TreeEntry } from '../shared/tree.ts';
import { checkedBySdk } from './hostCheck.ts';
import { INDEX_VERSION, type BlobFacts, type CommitIndex, type IndexedSkill } from './types.ts';
import { compareText } from '../shared/text.ts';

/**
 * What is already known by blob id, shared across the commits of a source: unchanged blobs are not re-hashed
 * and unchanged SKILL.md files are not re-read or re-parsed.
 */
export interface IndexCache {
  blobs: Map<string, BlobFacts>;
  skillMd: Map<string, FrontmatterResult>;
}

export function newIndexCache(): IndexCache {
  return { blobs: new Map(), skillMd: new Map() };
}

export interface IndexInput {
  commit: string;
  commitTime: string;
  /** The commit's root tree id. */
  tree: string;
  entries: readonly TreeEntry[];
  readBlob: (id: string) => Promise<Uint8Array>;
  /**
   * Blob sizes from the objects' headers, contents not read: a skill over the limits is then refused without
   * being read. Without it, sizes come from reading every blob.
   */
  blobSizes?: (ids: readonly string[]) => Promise<Array<number | undefined>>;
  /** Blob reads to keep in flight (`Repository.readAhead`); default DEFAULT_READ_AHEAD. */
  readAhead?: number;
  /** Folders to search for skills; default the whole repository. */
  paths?: readonly string[];
  strictNames?: boolean;
  cache?: IndexCache;
}

/** Blob reads in flight while indexing, unless the reader says otherwise. */
export const DEFAULT_READ_AHEAD = 32;
/** Blobs larger than this are read one at a time: memory stays the read-ahead's small blobs and one large one. */
export const LARGE_BLOB_BYTES = 1024 * 1024;

export function digestOf(bytes: Uint8Array): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}

function factsOf(bytes: Uint8Array): BlobFacts {
  return {
    size: bytes.byteLength,
    digest: digestOf(bytes),
    ...(isLfsPointer(bytes) ? { lfs: true as const } : {}),
  };
}

/** Blob sizes from the headers, for every file of every discovered skill; empty without `blobSizes`. */
async function sizesOf(
  input: IndexInput,
  skills: ReadonlyArray<{ files: ReadonlyArray<{ blob: string }> }>,
): Promise<Map<string, number>> {
  const sizes = new Map<string, number>();
  if (input.blobSizes === undefined) return sizes;
  const ids = [...new Set(skills.flatMap((skill) => skill.files.map((file) => file.blob)))];
  const found = await input.blobSizes(ids);
  ids.forEach((id, i) => {
    if (found[i] !== undefined) sizes.set(id, found[i]);
  });
  return sizes;
}

/** Indexes one commit: finds its skills, hashes every blob they serve, applies the rules. */
export async function indexCommit(input: IndexInput): Promise<CommitIndex> {
  const { blobs: cache, skillMd: parsedCache } = input.cache ?? newIndexCache();
  const found = discoverSkills(input.entries, input.paths?.length ? input.paths : ['']);
  const problems: SkillProblem[] = [...found.problems];
  // Blobs are read a read-ahead at a time, in the order the loops below ask for them: a git backend answers
  // concurrent reads in one pipelined stream, and memory stays what the read-ahead holds.
  const reads = new PQueue({ concurrency: input.readAhead ?? DEFAULT_READ_AHEAD });
  const largeReads = new PQueue({ concurrency: 1 });
  const reading = new Map<string, Promise<BlobFacts>>();
  const known = await sizesOf(input, found.skills);
  /** Queues a read of blob `id` (a large one alone); awaited, and its error thrown, by the loops below. */
  const queued = <T>(id: string, read: () => Promise<T>): Promise<T> => {
    const pending = ((known.get(id) ?? 0) > LARGE_BLOB_BYTES ? largeReads : reads).add(read);
    // Never an unhandled rejection meanwhile.
    pending.catch(() => undefined);
    return pending;
  };
  const facts = (id: string): Promise<BlobFacts> => {
    const cached = cache.get(id);
    if (cached !== undefined) return Promise.resolve(cached);
    let pending = reading.get(id);
    if (pending === undefined) {
      pending = queued(id, async () => {
        const computed = factsOf(await input.readBlob(id));
        cache.set(id, computed);
        return computed;
      });
      reading.set(id, pending);
    }
    return pending;
  };
  const sizeOf = async (id: string) => known.get(id) ?? (await facts(id)).size;
  /** Within the extension's limits by the headers' sizes: only such a skill's files are read. */
  const fits = (skill: (typeof found.skills)[number]) =>
    skill.files.length <= MAX_SKILL_FILES &&
    skill.files.reduce((sum, file) => sum + (known.get(file.blob) ?? 0), 0) <= MAX_SKILL_BYTES;
  // Every SKILL.md (nested ones too) is read for its text, once, in the same read-ahead as the other files: each
  // skill's SKILL.md is asked for before its files, and the loop below awaits them in order.
  const skillMds = new Set(found.skills.map((skill) => skill.skillMd));
  const parsing = new Map<string, Promise<FrontmatterResult>>();
  const parsedOf = (blob: string): Promise<FrontmatterResult> => {
    const cached = parsedCache.get(blob);
    if (cached !== undefined) return Promise.resolve(cached);
    let pending = parsing.get(blob);
    if (pending === undefined) {
      const size = known.get(blob);
      if (size !== undefined && size > MAX_SKILL_BYTES)
        return Promise.resolve({
          ok: false,
          reason: 'too-large',
          detail: `SKILL.md is ${size} bytes; a skill may hold ${MAX_SKILL_BYTES} (it was not read)`,
        });
      pending = queued(blob, async () => {
        const skillMd = await input.readBlob(blob);
        if (!cache.has(blob)) cache.set(blob, factsOf(skillMd));
        let parsed = parseSkillMd(skillMd);
        if (parsed.ok && parsed.plain !== true) parsed = await checkedBySdk(skillMd, parsed);
        parsedCache.set(blob, parsed);
        return parsed;
      });
      parsing.set(blob, pending);
    }
    return pending;
  };
  for (const skill of found.skills) {
    void parsedOf(skill.skillMd);
    if (fits(skill)) for (const file of skill.files) if (!skillMds.has(file.blob)) void facts(file.blob);
  }
  const candidates: SkillCandidate[] = [];
  for (const skill of found.skills) {
    const parsed = await parsedOf(skill.skillMd);
    const files = [];
    for (const file of skill.files) files.push({ ...file, size: await sizeOf(file.blob) });
    candidates.push({ dir: skill.dir, parsed, files });
  }
  const published = publishSkills(candidates, { strictNames: input.strictNames ?? false });
  problems.push(...published.problems);
  const skills: IndexedSkill[] = [];
  const pointers = new Set<string>();
  for (const skill of published.skills) {
    const files = [];
    for (const file of skill.files) {
      const { size, digest, lfs } = await facts(file.blob);
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
      ...(declared.declaration === undefined ? {} : { declaration: declared.declaration }),
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
