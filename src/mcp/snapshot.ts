import type { Resource } from '@modelcontextprotocol/server';
import { DIRECTORY_MIME_TYPE, type Skill } from '@modelcontextprotocol/server/ext/skills';
import {
  type CatalogFile,
  type CatalogSkill,
  namespaceUri,
  skillFileUri,
  skillMdUri,
  type Namespace,
} from '../catalog/index.ts';
import { type IndexedSkill, signerMeta, skillDigest } from '../index/index.ts';
import { basename, dirname, join } from '../skills/index.ts';
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

/** Everything MCP answers about one namespace, built once: requests are map lookups. */
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
  /** File URI → file. */
  readonly files: ReadonlyMap<string, ServedFile>;
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

/** A skill's own provenance: its digest, and its folder in the repository where the URI names another. */
function ownMeta(skill: IndexedSkill, digestOf: string, always: boolean): Meta {
  const path = skill.dir === '' ? '.' : skill.dir;
  const digest = { [`${META_PREFIX}digest`]: digestOf };
  return always || skill.dir !== skill.servedDir ? { [`${META_PREFIX}path`]: path, ...digest } : digest;
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

function buildSkill(
  ns: Namespace,
  record: NamespaceRecord,
  skill: IndexedSkill,
  files: Map<string, ServedFile>,
): ServedSkill {
  const uri = skillMdUri(ns.source, ns.commit, skill.servedDir);
  const description = String(skill.frontmatter['description']);
  const digest = skillDigest(skill);
  const meta = Object.freeze({ ...record.provenance, ...ownMeta(skill, digest, true) });
  const own = new Map<string, ServedFile>();
  for (const file of skill.files) {
    const fileUri = skillFileUri(ns.source, ns.commit, skill.servedDir, file.relPath);
    // A nested skill's file has one URI whichever skill lists it: keep one object for it.
    let served = files.get(fileUri);
    if (served === undefined) files.set(fileUri, (served = new Served(fileUri, file)));
    own.set(file.relPath, served);
  }
  const resources = [...own.values()]
    .map(({ uri: fileUri, file }) => ({ uri: fileUri, digest: file.digest, size: file.size }))
    .sort((a, b) => compareText(a.uri, b.uri));
  const frontmatter = skill.frontmatter as Skill['frontmatter'];
  return {
    ns,
    skill,
    uri,
    description,
    namespace: record,
    meta,
    entry: deepFreeze({ uri, frontmatter, resources, _meta: meta }),
    listEntry: deepFreeze({ uri, frontmatter, resources, _meta: ownMeta(skill, digest, false) }),
    listed: deepFreeze({ uri, name: skill.name, description, mimeType: 'text/markdown', _meta: meta }),
    files: own,
  };
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

/** Everything MCP answers about `ns` (serving.ts keeps it while a served catalog state holds `ns`). */
export function buildSnapshot(ns: Namespace): Snapshot {
  const files = new Map<string, ServedFile>();
  let dirs: Map<string, Resource[]> | undefined;
  const record = recordOf(ns);
  const inIndexOrder = ns.skills.map((skill) => buildSkill(ns, record, skill, files));
  const ordered = [...inIndexOrder].sort((a, b) => compareText(a.uri, b.uri));
  return {
    ns,
    uri: record.uri,
    record,
    ordered,
    inIndexOrder,
    skills: new Map(ordered.map((served) => [served.uri, served])),
    files,
    // Built at the first read that needs the folders: a listing does not.
    get dirs() {
      return (dirs ??= buildDirs(ns, ordered));
    },
  };
}
