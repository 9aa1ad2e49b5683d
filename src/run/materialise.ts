import { createHash, randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import PQueue from 'p-queue';
import type { CatalogSkill, FileReader, Namespace } from '../catalog/index.ts';

/** Materialised files and folders: nobody writes to them, only their owner reads them. */
const FILE_MODE = 0o400;
const DIR_MODE = 0o500;
const PRIVATE_DIR = 0o700;
/** With scripts under another user: every file readable, and the root open to that user's group alone. */
const SHARED_FILE_MODE = 0o444;
const SHARED_DIR_MODE = 0o555;
const GROUP_ROOT_MODE = 0o750;
/** Files read and written at once while materialising. */
const WRITE_AHEAD = 16;

/** Puts a skill's exact files on disk to run them: one read-only folder per (source, commit, skill). */
export interface Materialiser {
  /** The folder the skill's files are materialised in: fixed by source, commit and skill folder. */
  dirOf(served: CatalogSkill): string;
  /**
   * Makes `dirOf(served)` hold exactly the skill's files (no more, no other bytes, read-only), writing them
   * from git blobs checked against the manifest when it does not: `cold` when it wrote them, `replaced` when
   * it found the folder changed since it was written.
   */
  ensure(served: CatalogSkill): Promise<'warm' | 'cold' | 'replaced'>;
  /** Removes the folders of commits `served` no longer names. */
  prune(served: (source: string, commit: string) => boolean): Promise<void>;
}

/** The folder name of a skill: its repository path, encoded so that no two paths share one. */
function keyOf(dir: string): string {
  if (dir === '') return '@root';
  const encoded = encodeURIComponent(dir);
  // encodeURIComponent never writes "@": a hashed name cannot be an encoded path.
  return encoded.length <= 200 ? encoded : `@${createHash('sha256').update(dir).digest('hex')}`;
}

/** Removes a tree made read-only: folders are made writable again first. */
async function removeTree(root: string): Promise<void> {
  const open = async (dir: string): Promise<void> => {
    await fsp.chmod(dir, PRIVATE_DIR);
    for (const entry of await fsp.readdir(dir, { withFileTypes: true }))
      if (entry.isDirectory()) await open(path.join(dir, entry.name));
  };
  try {
    await open(root);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  await fsp.rm(root, { recursive: true, force: true });
}

/** Makes the folders between `root` and `dir` (source, commit) and traversable by the scripts' user. */
async function openParents(root: string, dir: string): Promise<void> {
  await fsp.mkdir(path.dirname(dir), { recursive: true, mode: PRIVATE_DIR });
  for (let parent = path.dirname(dir); parent !== root; parent = path.dirname(parent))
    await fsp.chmod(parent, 0o755);
}

/** True when `file` is a read-only regular file of exactly these bytes (by size and sha256). */
async function holdsBytes(file: string, want: { size: number; digest: string }): Promise<boolean> {
  const stat = await fsp.lstat(file);
  if (!stat.isFile() || (stat.mode & 0o222) !== 0 || stat.size !== want.size) return false;
  return (
    `sha256:${createHash('sha256')
      .update(await fsp.readFile(file))
      .digest('hex')}` === want.digest
  );
}

/**
 * True when `dir` holds exactly `expected` (path → size and sha256 digest): regular files and folders only,
 * nothing written since. Folders are walked first, then every file is checked at once.
 */
async function holdsExactly(dir: string, expected: ReadonlyMap<string, { size: number; digest: string }>) {
  const files: Array<[string, string]> = [];
  const walk = async (folder: string, prefix: string): Promise<boolean> => {
    const stat = await fsp.lstat(folder);
    if (!stat.isDirectory() || (stat.mode & 0o222) !== 0) return false;
    for (const entry of await fsp.readdir(folder, { withFileTypes: true })) {
      const rel = prefix === '' ? entry.name : `${prefix}/${entry.name}`;
      const full = path.join(folder, entry.name);
      if (entry.isDirectory()) {
        if (!(await walk(full, rel))) return false;
      } else if (entry.isFile() && expected.has(rel)) files.push([rel, full]);
      else return false;
    }
    return true;
  };
  try {
    if (!(await walk(dir, '')) || files.length !== expected.size) return false;
    const checks = await Promise.all(files.map(([rel, full]) => holdsBytes(full, expected.get(rel)!)));
    return checks.every(Boolean);
  } catch {
    return false;
  }
}

/**
 * Materialises under `root` (made private, emptied at first use: nothing of an earlier process is trusted).
 * Every file comes through `read`, which checks the blob against the manifest's size and digest; the folder
 * is checked again, byte for byte, after it is written and before every run, since a script runs as the same
 * user and could have changed it.
 */
export function materialiser(root: string, read: FileReader, reader?: { gid: number }): Materialiser {
  const fileMode = reader === undefined ? FILE_MODE : SHARED_FILE_MODE;
  const dirMode = reader === undefined ? DIR_MODE : SHARED_DIR_MODE;
  let ready: Promise<void> | undefined;
  const prepare = () =>
    (ready ??= (async () => {
      await removeTree(root);
      await fsp.mkdir(root, { recursive: true, mode: PRIVATE_DIR });
      await fsp.chmod(root, PRIVATE_DIR);
      // Scripts of another user read the files through the root's group; other users get nothing.
      if (reader !== undefined) {
        await fsp.chown(root, process.getuid?.() ?? 0, reader.gid);
        await fsp.chmod(root, GROUP_ROOT_MODE);
      }
      // Node reads the nearest package.json above a script: this one, not whatever project holds dataDir.
      await fsp.writeFile(path.join(root, 'package.json'), '{}\n', { mode: fileMode });
    })().catch((error: unknown) => {
      ready = undefined;
      throw error;
    }));
  const dirOf = (served: CatalogSkill) =>
    path.join(root, served.ns.source, served.ns.commit, keyOf(served.skill.dir));

  const write = async (ns: Namespace, served: CatalogSkill, target: string) => {
    const targets = [...served.files.values()].map((file) => ({
      file,
      full: path.join(target, ...file.file.relPath.split('/')),
    }));
    const folders = new Set<string>([target]);
    for (const { full } of targets)
      for (let dir = path.dirname(full); dir !== target; dir = path.dirname(dir)) folders.add(dir);
    // Parents before children, then the files WRITE_AHEAD at a time (reads pipeline in the git backend).
    for (const dir of [...folders].sort((a, b) => a.length - b.length))
      await fsp.mkdir(dir, { recursive: true, mode: PRIVATE_DIR });
    const writes = new PQueue({ concurrency: WRITE_AHEAD });
    await Promise.all(
      targets.map(({ file, full }) =>
        writes.add(async () => fsp.writeFile(full, await read(ns, file), { flag: 'wx', mode: fileMode })),
      ),
    );
    // Deepest first: a folder made read-only takes no new entries.
    for (const dir of [...folders].sort((a, b) => b.length - a.length)) await fsp.chmod(dir, dirMode);
  };

  return {
    dirOf,
    async ensure(served) {
      await prepare();
      const dir = dirOf(served);
      const expected = new Map(
        [...served.files.values()].map(({ file }) => [
          file.relPath,
          { size: file.size, digest: file.digest },
        ]),
      );
      if (await holdsExactly(dir, expected)) return 'warm';
      const existed = await fsp
        .lstat(dir)
        .then(() => true)
        .catch(() => false);
      await removeTree(dir);
      const temp = `${dir}.${randomBytes(6).toString('hex')}.tmp`;
      if (reader !== undefined) await openParents(root, dir);
      try {
        await write(served.ns, served, temp);
        if (!(await holdsExactly(temp, expected)))
          throw new Error('the materialised files do not match the manifest');
        await fsp.rename(temp, dir);
      } catch (error) {
        await removeTree(temp).catch(() => undefined);
        throw error;
      }
      return existed ? 'replaced' : 'cold';
    },
    async prune(served) {
      if (ready === undefined) return;
      await ready;
      const folders = async (dir: string) =>
        (await fsp.readdir(dir, { withFileTypes: true }).catch(() => [])).filter((e) => e.isDirectory());
      for (const source of await folders(root))
        for (const commit of await folders(path.join(root, source.name)))
          if (!served(source.name, commit.name)) await removeTree(path.join(root, source.name, commit.name));
    },
  };
}
