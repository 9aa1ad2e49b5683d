import type { Resource } from '@modelcontextprotocol/server';
import { DIRECTORY_MIME_TYPE, type Skill } from '@modelcontextprotocol/server/ext/skills';
import {
  type CatalogFile,
  encodePath,
  type CatalogSkill,
  namespaceUri,
  skillFileUri,
  skillMdUri,
  type Namespace,
} from '../catalog/index.ts';
import { fileAt, type IndexedFile, type IndexedSkill, signerMeta, skillDigestBytes } from '../index/index.ts';
import { basename, dirname, join, SKILL_MD } from '../skills/index.ts';
import { compareText } from '../shared/text.ts';
import { mimeTypeFor } from './mime.ts';

/** Our own `_meta` prefix for provenance (the `io.modelcontextprotocol.skills/` prefix is reserved). */
export const META_PREFIX = 'dev.skillpin/';
/** The key of a skills/list result's `_meta` holding the provenance of each namespace on the page. */
export const NAMESPACES_META = `${META_PREFIX}namespaces`;

type Meta = Readonly<Record<string, string>>;

/** One namespace's URI and the provenance every skill of it shares: repository, commit, commit time, signer. */
export interface NamespaceRecord {
  readonly uri: string;
  readonly provenance: Meta;
}

export interface ServedFile extends CatalogFile {
  readonly mimeType: string;
}

export interface ServedSkill extends CatalogSkill {
  readonly description: string;
  /** Its namespace's record (one object, shared by every skill of the namespace). */
  readonly namespace: NamespaceRecord;
  /** Its digest (index/digest.ts `skillDigest`), worked out once (its bytes kept, the text made when asked for). */
  readonly digest: string;
  /** Full provenance, under our own `_meta` prefix: the namespace's, its path in the repository, its digest. */
  readonly meta: Meta;
  /** The protocol entry as skills/get answers it: verbatim frontmatter, complete manifest sorted by URI, full
   * provenance. Frozen. */
  readonly entry: Skill;
  /** The same entry as a skills/list page carries it: provenance only what is its own (its digest, and its path
   * where that differs from the URI's); the page gives its namespace's once. Frozen. */
  readonly listEntry: Skill;
  /** Its SKILL.md as resources/list shows it. */
  readonly listed: Resource;
  readonly files: ReadonlyMap<string, ServedFile>;
}

/**
 * Everything MCP answers about one namespace. What is held is what a request looks up (its skills by URI, in both
 * orders); what a request answers with (an entry, a manifest, a file) is made from the index when asked for, so a
 * served skill costs its URI, its digest and a few references, whatever its files (the entries, manifests, files'
 * URIs and provenance made ready for every skill took 1.5 KB a skill: a heap of 10,000 real-shaped skills, 88.0 →
 * 72.6 MiB).
 */
export interface Snapshot {
  readonly ns: Namespace;
  /** The namespace's own URI (no path). */
  readonly uri: string;
  /** Its URI and shared provenance. */
  readonly record: NamespaceRecord;
  /** Served skills, sorted by URI. */
  readonly ordered: readonly ServedSkill[];
  /** The same skills in the namespace's order (its index's: what a persisted search index numbers them by). */
  readonly inIndexOrder: readonly ServedSkill[];
  /** SKILL.md URI → skill. */
  readonly skills: ReadonlyMap<string, ServedSkill>;
  /** The file served at `path` (a decoded served path, as locate gives it), if any. */
  fileAt(path: string): ServedFile | undefined;
  /** Folder URI (every folder of every skill, its root included) → its children, sorted by URI. */
  readonly dirs: ReadonlyMap<string, readonly Resource[]>;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const item of Object.values(value)) deepFreeze(item);
  }
  return value;
}

/** What every skill of `ns` shares, once per namespace. */
function recordOf(ns: Namespace): NamespaceRecord {
  return deepFreeze({
    uri: namespaceUri(ns.source, ns.commit),
    provenance: {
      [`${META_PREFIX}repository`]: ns.origin.repository,
      [`${META_PREFIX}commit`]: ns.commit,
      [`${META_PREFIX}commitTime`]: ns.commitTime,
      // Provenance _meta, sent as it is built: a namespace that follows no ref has no ref key.
      ...(ns.origin.ref === undefined ? {} : { [`${META_PREFIX}ref`]: ns.origin.ref }),
      ...signerMeta(META_PREFIX, ns.signer),
    },
  });
}

const PATH_META = `${META_PREFIX}path`;
const DIGEST_META = `${META_PREFIX}digest`;

/** A skill's own provenance: its digest, and its folder in the repository where the URI names another. Frozen. */
function ownMeta(skill: IndexedSkill, digestOf: string, always: boolean): Meta {
  if (!always && skill.dir === skill.servedDir) return Object.freeze({ [DIGEST_META]: digestOf });
  return Object.freeze({ [PATH_META]: skill.dir === '' ? '.' : skill.dir, [DIGEST_META]: digestOf });
}

/** A served file; its media type is looked up when a read asks for it (a listing never does). */
class Served implements ServedFile {
  constructor(
    readonly uri: string,
    readonly file: CatalogFile['file'],
  ) {}
  get mimeType(): string {
    return mimeTypeFor(basename(this.file.relPath));
  }
}

const byPath = (a: IndexedFile, b: IndexedFile) => compareText(a.relPath, b.relPath);

/** `files` sorted by path, as an index keeps them (build.ts); a copy sorted where they are not. */
function sortedByPath(files: readonly IndexedFile[]): readonly IndexedFile[] {
  for (let i = 1; i < files.length; i++)
    if (byPath(files[i - 1]!, files[i]!) >= 0) return [...files].sort(byPath);
  return files;
}

/**
 * A read-only map whose entries are made as they are gone through (`entries`): keys, values, iteration and forEach
 * from them. A view of what is held otherwise, without a Map of its own.
 */
abstract class MapView<V> implements ReadonlyMap<string, V> {
  abstract get(key: string): V | undefined;
  abstract readonly size: number;
  abstract entries(): MapIterator<[string, V]>;

  has(key: string): boolean {
    return this.get(key) !== undefined;
  }

  *keys(): MapIterator<string> {
    for (const [key] of this.entries()) yield key;
  }

  *values(): MapIterator<V> {
    for (const [, value] of this.entries()) yield value;
  }

  [Symbol.iterator](): MapIterator<[string, V]> {
    return this.entries();
  }

  forEach(each: (value: V, key: string, map: ReadonlyMap<string, V>) => void): void {
    for (const [key, value] of this.entries()) each(value, key, this);
  }
}

/**
 * A skill's files by path relative to its folder: one is looked up in its indexed skill (index/packed.ts `fileAt`,
 * which makes no other); all of them, sorted, are made only to go through them.
 */
class SkillFiles extends MapView<ServedFile> {
  #sorted: readonly IndexedFile[] | undefined;
  constructor(readonly served: ServedSkill) {
    super();
  }

  get sorted(): readonly IndexedFile[] {
    return (this.#sorted ??= sortedByPath(this.served.skill.files));
  }

  get size(): number {
    return this.sorted.length;
  }

  #served(file: IndexedFile): ServedFile {
    const { ns, skill } = this.served;
    return new Served(skillFileUri(ns.source, ns.commit, skill.servedDir, file.relPath), file);
  }

  get(relPath: string): ServedFile | undefined {
    const file = fileAt(this.served.skill, relPath);
    return file === undefined ? undefined : this.#served(file);
  }

  *entries(): MapIterator<[string, ServedFile]> {
    for (const file of this.sorted) yield [file.relPath, this.#served(file)];
  }

  override *keys(): MapIterator<string> {
    for (const file of this.sorted) yield file.relPath;
  }
}

/** A served skill: what it answers with is made from its indexed skill when asked for, its URI too. */
class Skilled implements ServedSkill {
  /** The digests of its namespace's skills, 32 bytes each, and where its own is (as text, 100,000 took 11 MiB). */
  readonly #digests: Buffer;
  readonly #at: number;
  constructor(
    readonly ns: Namespace,
    readonly namespace: NamespaceRecord,
    readonly skill: IndexedSkill,
    digests: Buffer,
    at: number,
  ) {
    skillDigestBytes(skill).copy(digests, at * DIGEST_BYTES);
    this.#digests = digests;
    this.#at = at;
    // Every entry hands it out as it is: frozen once, here.
    deepFreeze(skill.frontmatter);
  }

  get digest(): string {
    const start = this.#at * DIGEST_BYTES;
    return `sha256:${this.#digests.toString('hex', start, start + DIGEST_BYTES)}`;
  }

  /** Its SKILL.md's URI, made when asked for (held, 100,000 took 15 MiB with the strings they were joined from). */
  get uri(): string {
    return skillMdUri(this.ns.source, this.ns.commit, this.skill.servedDir);
  }

  get description(): string {
    return String(this.skill.frontmatter['description']);
  }

  get meta(): Meta {
    return Object.freeze({ ...this.namespace.provenance, ...ownMeta(this.skill, this.digest, true) });
  }

  /** Its files sorted by path: an index's skill makes them when asked for (index/packed.ts), so none is kept here. */
  get #sorted(): readonly IndexedFile[] {
    return sortedByPath(this.skill.files);
  }

  get files(): ReadonlyMap<string, ServedFile> {
    return new SkillFiles(this);
  }

  /** Its manifest: every file's URI, digest and size, sorted by URI. Frozen (each made here: frozen as made, not
   * walked again). */
  #resources(): Skill['resources'] {
    const { ns, skill } = this;
    // A file's URI is its skill folder's and its path there, each segment encoded: the folder's once for all.
    const folder = namespaceUri(ns.source, ns.commit, skill.servedDir);
    const resources = this.#sorted.map(({ relPath, digest, size }) =>
      Object.freeze({ uri: `${folder}/${encodePath(relPath)}`, digest, size }),
    );
    return Object.freeze(resources.sort((a, b) => compareText(a.uri, b.uri))) as Skill['resources'];
  }

  get entry(): Skill {
    const frontmatter = this.skill.frontmatter as Skill['frontmatter'];
    return Object.freeze({ uri: this.uri, frontmatter, resources: this.#resources(), _meta: this.meta });
  }

  get listEntry(): Skill {
    const frontmatter = this.skill.frontmatter as Skill['frontmatter'];
    const _meta = ownMeta(this.skill, this.digest, false);
    return Object.freeze({ uri: this.uri, frontmatter, resources: this.#resources(), _meta });
  }

  get listed(): Resource {
    const { uri, skill, description, meta } = this;
    return Object.freeze({ uri, name: skill.name, description, mimeType: 'text/markdown', _meta: meta });
  }
}

/** Every folder of every skill with its children, as directory reads answer them. */
function buildDirs(ns: Namespace, skills: readonly ServedSkill[]): Map<string, Resource[]> {
  const children = new Map<string, Map<string, Resource>>();
  const add = (dir: string, child: Resource) => {
    let known = children.get(dir);
    if (known === undefined) children.set(dir, (known = new Map()));
    known.set(child.uri, child);
  };
  for (const { skill } of skills) {
    if (!children.has(skill.servedDir)) children.set(skill.servedDir, new Map());
    for (const file of skill.files) {
      const path = join(skill.servedDir, file.relPath);
      const uri = namespaceUri(ns.source, ns.commit, path);
      const name = basename(path);
      add(dirname(path), { uri, name, mimeType: mimeTypeFor(name), size: file.size });
      for (let dir = dirname(path); dir !== skill.servedDir; dir = dirname(dir)) {
        const folder = basename(dir);
        add(dirname(dir), {
          uri: namespaceUri(ns.source, ns.commit, dir),
          name: folder,
          mimeType: DIRECTORY_MIME_TYPE,
        });
      }
    }
  }
  const dirs = new Map<string, Resource[]>();
  for (const [dir, known] of children) {
    const sorted = [...known.values()].sort((a, b) => compareText(a.uri, b.uri));
    dirs.set(namespaceUri(ns.source, ns.commit, dir), deepFreeze(sorted));
  }
  return dirs;
}

/** `skills` sorted by URI (each URI made once, not at each comparison). */
export function byUri<T extends { readonly uri: string }>(skills: readonly T[]): T[] {
  const keyed = skills.map((served) => ({ uri: served.uri, served }));
  keyed.sort((a, b) => compareText(a.uri, b.uri));
  return keyed.map(({ served }) => served);
}

const SKILL_MD_TAIL = `/${SKILL_MD}`;

/** Bytes of a SHA-256. */
const DIGEST_BYTES = 32;

/**
 * A namespace's skills by the URI of their SKILL.md, held by their served folder as the URI encodes it (the folder's
 * own string where nothing in it is encoded): the URIs are made when asked for.
 */
class SkillsByUri extends MapView<ServedSkill> {
  readonly #prefix: string;
  readonly #byFolder = new Map<string, ServedSkill>();

  constructor(
    record: NamespaceRecord,
    readonly ordered: readonly ServedSkill[],
  ) {
    super();
    this.#prefix = `${record.uri}/`;
    for (const served of ordered) this.#byFolder.set(encodePath(served.skill.servedDir), served);
  }

  /** The skill served at `folder` (a decoded served path). */
  at(folder: string): ServedSkill | undefined {
    return this.#byFolder.get(encodePath(folder));
  }

  get(uri: string): ServedSkill | undefined {
    if (!uri.startsWith(this.#prefix)) return undefined;
    const path = uri.slice(this.#prefix.length);
    if (path === SKILL_MD) return this.#byFolder.get('');
    return path.endsWith(SKILL_MD_TAIL)
      ? this.#byFolder.get(path.slice(0, -SKILL_MD_TAIL.length))
      : undefined;
  }

  get size(): number {
    return this.ordered.length;
  }

  *entries(): MapIterator<[string, ServedSkill]> {
    for (const served of this.ordered) yield [served.uri, served];
  }

  override *values(): MapIterator<ServedSkill> {
    yield* this.ordered;
  }
}

/** Everything MCP answers about `ns` (serving.ts keeps it while a served catalog state holds `ns`). */
export function buildSnapshot(ns: Namespace): Snapshot {
  let dirs: Map<string, Resource[]> | undefined;
  const record = recordOf(ns);
  const digests = Buffer.alloc(ns.skills.length * DIGEST_BYTES);
  const inIndexOrder = ns.skills.map((skill, at) => new Skilled(ns, record, skill, digests, at));
  const ordered = byUri(inIndexOrder);
  const skills = new SkillsByUri(record, ordered);
  return {
    ns,
    uri: record.uri,
    record,
    ordered,
    inIndexOrder,
    skills,
    // A file's URI is its skill's folder and its path there: the skill is the nearest folder above it that is one
    // (a nested skill's file is listed by the skill around it too, under the same URI and facts).
    fileAt(path) {
      for (let dir = dirname(path); ; dir = dirname(dir)) {
        const served = skills.at(dir);
        const file = served?.files.get(dir === '' ? path : path.slice(dir.length + 1));
        if (file !== undefined || dir === '') return file;
      }
    },
    // Built at the first read that needs the folders: a listing does not.
    get dirs() {
      return (dirs ??= buildDirs(ns, ordered));
    },
  };
}
