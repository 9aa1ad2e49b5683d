import { join } from '../skills/index.ts';
import type { CommitIndex, IndexedFile, IndexedSkill } from './types.ts';

/** A file's digest: `sha256:` and 64 lowercase hex digits. */
const DIGEST = /^sha256:[0-9a-f]{64}$/;
const DIGEST_PREFIX = 'sha256:';
/** A blob id: a SHA-1 or a SHA-256 object name. */
const BLOB = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;

/** The blob ids and digests of one commit's files as bytes: each file's blob id, then its digest's 32 bytes. */
class FileFacts {
  constructor(
    readonly bytes: Buffer,
    /** Bytes of a blob id: 20 (SHA-1) or 32 (SHA-256), the same for every file of a commit. */
    readonly blobBytes: number,
  ) {}

  /** Bytes of one file's facts. */
  get stride(): number {
    return this.blobBytes + 32;
  }
}

/**
 * One served file of an index as the process holds it: its path in its skill and its size as they are, its blob id
 * and digest as bytes of its commit's table (hex when asked for), its path in the repository made from its skill's
 * folder. Its JSON is the plain object's, key for key, so an index file written from it reads back the same.
 */
class PackedFile implements IndexedFile {
  readonly #facts: FileFacts;
  readonly #at: number;
  readonly #dir: string;

  constructor(
    readonly relPath: string,
    readonly size: number,
    facts: FileFacts,
    at: number,
    dir: string,
  ) {
    this.#facts = facts;
    this.#at = at;
    this.#dir = dir;
  }

  get path(): string {
    return join(this.#dir, this.relPath);
  }

  get blob(): string {
    const start = this.#at * this.#facts.stride;
    return this.#facts.bytes.toString('hex', start, start + this.#facts.blobBytes);
  }

  get digest(): string {
    const start = this.#at * this.#facts.stride + this.#facts.blobBytes;
    return DIGEST_PREFIX + this.#facts.bytes.toString('hex', start, start + 32);
  }

  toJSON(): IndexedFile {
    const { path, relPath, blob, size, digest } = this;
    return { path, relPath, blob, size, digest };
  }
}

/**
 * Whether the files of `skill` are to be packed: not yet, and every one can be (its path its folder's and its own,
 * its facts hex).
 */
function packable(skill: IndexedSkill, blobHex: number): boolean {
  return (
    !(skill.files[0] instanceof PackedFile) &&
    skill.files.every(
      (file) =>
        file.path === join(skill.dir, file.relPath) &&
        file.blob.length === blobHex &&
        BLOB.test(file.blob) &&
        DIGEST.test(file.digest),
    )
  );
}

/**
 * Makes `index` hold its files in fewer bytes, in place (a skill packed already is left as it is): each file's blob id and
 * digest as bytes in one buffer for the commit, its path in the repository made from its skill's folder when asked
 * for, paths in skills that repeat held once; a skill's served folder is its folder's string where they are equal, its
 * name its frontmatter's. Every file reads as before (`IndexedFile`). A file as the plain object held its path, path
 * in its skill, blob id and digest as strings of their own: about 300 bytes, 84 MiB of a warm restart's heap at
 * 1,000 indexes of 100 real-shaped skills (293,477 files); packed about 130. A skill with any file that is not as an
 * index builds it (a path elsewhere, facts that are not hex) keeps its files as they are.
 */
export function packFiles(index: CommitIndex): CommitIndex {
  const first = index.skills.find((skill) => skill.files.length > 0)?.files[0];
  const blobHex = first?.blob.length === 64 ? 64 : 40;
  const skills = index.skills.filter((skill) => packable(skill, blobHex));
  const count = skills.reduce((sum, skill) => sum + skill.files.length, 0);
  const facts = new FileFacts(Buffer.alloc(count * (blobHex / 2 + 32)), blobHex / 2);
  const paths = new Map<string, string>();
  let at = 0;
  for (const skill of skills) {
    skill.files = skill.files.map((file) => {
      const start = at * facts.stride;
      facts.bytes.write(file.blob, start, 'hex');
      facts.bytes.write(file.digest.slice(DIGEST_PREFIX.length), start + facts.blobBytes, 'hex');
      let relPath = paths.get(file.relPath);
      if (relPath === undefined) paths.set(file.relPath, (relPath = file.relPath));
      return new PackedFile(relPath, file.size, facts, at++, skill.dir);
    });
  }
  for (const skill of index.skills) {
    if (skill.servedDir === skill.dir) skill.servedDir = skill.dir;
    if (skill.frontmatter['name'] === skill.name) skill.name = skill.frontmatter['name'] as string;
  }
  return index;
}
