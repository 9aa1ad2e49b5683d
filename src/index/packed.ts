import { compareText, firstNotBefore, ownCopy } from '../shared/text.ts';
import { join } from '../skills/index.ts';
import type { Frontmatter, Declaration } from '../skills/index.ts';
import type { CommitIndex, IndexedFile, IndexedSkill } from './types.ts';

/** A file's digest: `sha256:` and 64 lowercase hex digits. */
const DIGEST = /^sha256:[0-9a-f]{64}$/;
const DIGEST_PREFIX = 'sha256:';
/** A blob id: a SHA-1 or a SHA-256 object name. */
const BLOB = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;

/** The facts of one commit's packed files: each file's blob id then its digest's 32 bytes, and its size. */
class FileFacts {
  readonly bytes: Buffer;
  readonly sizes: Uint32Array;
  /** Bytes of one file's blob id and digest. */
  readonly stride: number;

  constructor(
    count: number,
    /** Bytes of a blob id: 20 (SHA-1) or 32 (SHA-256), the same for every file of a commit. */
    readonly blobBytes: number,
  ) {
    this.stride = blobBytes + 32;
    this.bytes = Buffer.alloc(count * this.stride);
    this.sizes = new Uint32Array(count);
  }

  set(at: number, file: IndexedFile): void {
    const start = at * this.stride;
    this.bytes.write(file.blob, start, 'hex');
    this.bytes.write(file.digest.slice(DIGEST_PREFIX.length), start + this.blobBytes, 'hex');
    this.sizes[at] = file.size;
  }

  blob(at: number): string {
    const start = at * this.stride;
    return this.bytes.toString('hex', start, start + this.blobBytes);
  }

  digest(at: number): string {
    const start = at * this.stride + this.blobBytes;
    return DIGEST_PREFIX + this.bytes.toString('hex', start, start + 32);
  }
}

/**
 * One file of a packed skill, as its `files` makes it when asked for: its facts read from its commit's table (hex
 * when asked for), its path in the repository made from its skill's folder. Its JSON is the plain object's.
 */
class PackedFile implements IndexedFile {
  readonly #facts: FileFacts;
  readonly #at: number;
  readonly #dir: string;

  constructor(
    readonly relPath: string,
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
    return this.#facts.blob(this.#at);
  }

  get size(): number {
    return this.#facts.sizes[this.#at]!;
  }

  get digest(): string {
    return this.#facts.digest(this.#at);
  }

  toJSON(): IndexedFile {
    const { path, relPath, blob, size, digest } = this;
    return { path, relPath, blob, size, digest };
  }
}

/**
 * A skill of an index as the process holds it: its files' paths in the skill, and where their facts start in its
 * commit's table; `files` makes them when asked for (each call anew: sorted by path, as an index holds them). Its
 * JSON is the plain object's, key for key, so an index file written from it reads back the same.
 */
class PackedSkill implements IndexedSkill {
  readonly name: string;
  readonly dir: string;
  readonly servedDir: string;
  readonly frontmatter: Frontmatter;
  readonly bytes: number;
  declare readonly declaration?: Declaration;
  readonly #relPaths: readonly string[];
  readonly #facts: FileFacts;
  readonly #first: number;

  constructor(skill: IndexedSkill, relPaths: readonly string[], facts: FileFacts, first: number) {
    // Its name is its frontmatter's string, its served folder its folder's, where they are equal; strings of their
    // own (a path read from a tree listing can be a slice of a longer string, which it would keep alive).
    this.name =
      skill.frontmatter['name'] === skill.name ? (skill.frontmatter['name'] as string) : ownCopy(skill.name);
    this.dir = ownCopy(skill.dir);
    this.servedDir = skill.servedDir === skill.dir ? this.dir : ownCopy(skill.servedDir);
    this.frontmatter = skill.frontmatter;
    this.bytes = skill.bytes;
    if (skill.declaration !== undefined) this.declaration = skill.declaration;
    this.#relPaths = relPaths;
    this.#facts = facts;
    this.#first = first;
  }

  get files(): IndexedFile[] {
    return this.#relPaths.map(
      (relPath, i) => new PackedFile(relPath, this.#facts, this.#first + i, this.dir),
    );
  }

  /** Its file at `relPath`, found by bisection of its paths (sorted), the only file made. */
  fileAt(relPath: string): IndexedFile | undefined {
    const at = sortedIndexOf(this.#relPaths, relPath);
    return at === -1 ? undefined : new PackedFile(relPath, this.#facts, this.#first + at, this.dir);
  }

  toJSON(): IndexedSkill {
    const { name, dir, servedDir, frontmatter, files, bytes, declaration } = this;
    return { name, dir, servedDir, frontmatter, files, bytes, declaration };
  }
}

/** Where `relPath` is in `sorted` (by compareText), or -1. */
function sortedIndexOf(sorted: readonly string[], relPath: string): number {
  const at = firstNotBefore(sorted.length, (place) => compareText(sorted[place]!, relPath) < 0);
  return sorted[at] === relPath ? at : -1;
}

/**
 * The file of `skill` at `relPath` (relative to its folder): a packed skill's by bisection, making that file only;
 * another's found among its files.
 */
export function fileAt(skill: IndexedSkill, relPath: string): IndexedFile | undefined {
  return skill instanceof PackedSkill
    ? skill.fileAt(relPath)
    : skill.files.find((file) => file.relPath === relPath);
}

/**
 * Whether `skill` is to be packed: not yet, and every file can be (sorted by path as an index sorts them, its path
 * its folder's and its own, facts hex).
 */
function packable(skill: IndexedSkill, blobHex: number): boolean {
  return (
    !(skill instanceof PackedSkill) &&
    skill.files.every(
      (file, i) =>
        (i === 0 || compareText(skill.files[i - 1]!.relPath, file.relPath) < 0) &&
        file.path === join(skill.dir, file.relPath) &&
        file.blob.length === blobHex &&
        BLOB.test(file.blob) &&
        DIGEST.test(file.digest) &&
        Number.isInteger(file.size) &&
        file.size >= 0 &&
        file.size <= 0xffff_ffff,
    )
  );
}

/**
 * Makes `index` hold its skills' files in fewer bytes, in place (a skill packed already is left as it is): each
 * file's blob id, digest and size in one table for the commit, its path in its skill one string however often the
 * commit repeats it, its path in the repository made from its skill's folder when asked for; a skill's served
 * folder is its folder's string where they are equal, its name its frontmatter's. Every skill and file reads as
 * before (`IndexedSkill`, `IndexedFile`). A file held as the plain object (its path, path in its skill, blob id and
 * digest as strings of their own) took about 300 bytes: 84 MiB of a warm restart's heap at 1,000 indexes of 100
 * real-shaped skills (293,477 files). Packed, it is 56 bytes of the table and its path in its skill (one list for a
 * commit's skills of the same paths), made an object only when asked for. A skill with any file that is not as an
 * index builds it (a path elsewhere, facts that are not hex) is left as it is.
 */
export function packFiles(index: CommitIndex): CommitIndex {
  const first = index.skills.find((skill) => skill.files.length > 0)?.files[0];
  const blobHex = first?.blob.length === 64 ? 64 : 40;
  const packing = index.skills.map((skill) => packable(skill, blobHex));
  const count = index.skills.reduce((sum, skill, i) => sum + (packing[i] ? skill.files.length : 0), 0);
  const facts = new FileFacts(count, blobHex / 2);
  const paths = new Map<string, string>();
  const heldPath = (relPath: string) => {
    let held = paths.get(relPath);
    if (held === undefined) paths.set(relPath, (held = ownCopy(relPath)));
    return held;
  };
  // Skills of the same paths share one list of them (at 1,000 × 100, 32,712 lists for 99,925 skills).
  const lists = new Map<string, readonly string[]>();
  let at = 0;
  index.skills.forEach((skill, i) => {
    if (!packing[i]) return;
    const start = at;
    for (const file of skill.files) facts.set(at++, file);
    // A path holds no NUL (git's tree entries cannot).
    const key = skill.files.map((file) => file.relPath).join('\0');
    let relPaths = lists.get(key);
    if (relPaths === undefined) {
      relPaths = Object.freeze(skill.files.map((file) => heldPath(file.relPath)));
      lists.set(key, relPaths);
    }
    index.skills[i] = new PackedSkill(skill, relPaths, facts, start);
  });
  return index;
}
