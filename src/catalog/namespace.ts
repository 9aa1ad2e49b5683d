import type { CommitIndex, IndexedFile, IndexedSkill } from '../index/index.ts';
import { basename, dirname, join } from '../skills/index.ts';
import { compareText } from '../shared/text.ts';

/** Where a namespace's bytes came from, for provenance: never holds credentials. */
export interface Origin {
  /** Repository URL without credentials, or `local:<name>` for a local repository. */
  repository: string;
}

export interface ServedFile {
  file: IndexedFile;
  /** The innermost skill serving this path. */
  skill: IndexedSkill;
}

export interface DirectoryChild {
  name: string;
  kind: 'file' | 'directory';
}

/** One repo@commit as served: lookups by served path, and the one way to read its bytes. */
export interface Namespace {
  source: string;
  commit: string;
  index: CommitIndex;
  origin: Origin;
  /** Served skill folder → skill. */
  skills: ReadonlyMap<string, IndexedSkill>;
  /** Served file path → file. */
  files: ReadonlyMap<string, ServedFile>;
  /** Served folder path (every folder of every skill, roots included) → sorted children. */
  dirs: ReadonlyMap<string, readonly DirectoryChild[]>;
  readBlob(blob: string): Promise<Uint8Array>;
}

export function buildNamespace(
  source: string,
  index: CommitIndex,
  origin: Origin,
  readBlob: (blob: string) => Promise<Uint8Array>,
): Namespace {
  const skills = new Map<string, IndexedSkill>();
  const files = new Map<string, ServedFile>();
  const children = new Map<string, Map<string, DirectoryChild['kind']>>();
  const addChild = (dir: string, name: string, kind: DirectoryChild['kind']) => {
    let known = children.get(dir);
    if (known === undefined) children.set(dir, (known = new Map()));
    known.set(name, kind);
  };
  // Outer skills first, so a nested skill's files end up attributed to the innermost skill.
  const ordered = [...index.skills].sort((a, b) => a.servedDir.length - b.servedDir.length);
  for (const skill of ordered) {
    skills.set(skill.servedDir, skill);
    if (!children.has(skill.servedDir)) children.set(skill.servedDir, new Map());
    for (const file of skill.files) {
      const served = join(skill.servedDir, file.relPath);
      files.set(served, { file, skill });
      let child = served;
      let kind: DirectoryChild['kind'] = 'file';
      while (child !== skill.servedDir) {
        const parent = dirname(child);
        addChild(parent, basename(child), kind);
        child = parent;
        kind = 'directory';
      }
    }
  }
  const dirs = new Map<string, DirectoryChild[]>();
  for (const [dir, names] of children) {
    const sorted = [...names]
      .map(([name, kind]) => ({ name, kind }))
      .sort((a, b) => compareText(a.name, b.name));
    dirs.set(dir, sorted);
  }
  return { source, commit: index.commit, index, origin, skills, files, dirs, readBlob };
}
