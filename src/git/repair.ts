import { createHash } from 'node:crypto';
import { createReadStream, promises as fsp } from 'node:fs';
import path from 'node:path';
import type { GitSettings } from '../config/index.ts';
import { readBounded } from '../shared/boundedRead.ts';
import { writeFileAtomic } from '../shared/fs.ts';
import { openStore } from './backend.ts';
import { fetchCommit, type Linked, pinCommit } from './remote.ts';
import type { Remote, Repository } from './repository.ts';

const list = (dir: string) => fsp.readdir(dir).catch(() => [] as string[]);

/** Moves `from`'s complete packs into `into`: each pack's files first, its index last (readers look for it). */
async function adoptPacks(from: string, into: string): Promise<void> {
  const source = path.join(from, 'objects', 'pack');
  const target = path.join(into, 'objects', 'pack');
  await fsp.mkdir(target, { recursive: true });
  const names = await list(source);
  for (const idx of names.filter((name) => /^pack-[0-9a-f]+\.idx$/.test(name))) {
    const base = idx.slice(0, -'.idx'.length);
    if (!names.includes(`${base}.pack`)) continue;
    const files = names.filter((name) => name.startsWith(`${base}.`) && name !== idx);
    for (const file of [...files, idx]) await fsp.rename(path.join(source, file), path.join(target, file));
  }
}

/** Whether a pack index is whole: its last 20 bytes are the SHA-1 of all before them (read as a stream). */
async function wholeIndex(file: string): Promise<boolean> {
  const { size } = await fsp.stat(file);
  if (size < 20) return false;
  const sum = createHash('sha1');
  let trailer = Buffer.alloc(0);
  for await (const chunk of createReadStream(file, { end: size - 1 })) {
    const bytes = Buffer.concat([trailer, chunk as Buffer]);
    sum.update(bytes.subarray(0, Math.max(0, bytes.length - 20)));
    trailer = bytes.subarray(Math.max(0, bytes.length - 20));
  }
  return sum.digest().equals(trailer);
}

/**
 * Removes the packs of `gitdir` whose index is not whole (truncated, torn): after a repair fetched their objects
 * again, such an index only fails every reader that opens it. Returns the files removed.
 */
async function dropBrokenPacks(gitdir: string): Promise<string[]> {
  const dir = path.join(gitdir, 'objects', 'pack');
  const names = await list(dir);
  const removed: string[] = [];
  for (const idx of names.filter((name) => /^pack-[0-9a-f]+\.idx$/.test(name))) {
    if (await wholeIndex(path.join(dir, idx)).catch(() => false)) continue;
    const base = idx.slice(0, -'.idx'.length);
    // The index first: a reader that lists the folder meanwhile finds no index, so never opens the pack.
    for (const file of [idx, ...names.filter((name) => name.startsWith(`${base}.`) && name !== idx)]) {
      await fsp.rm(path.join(dir, file), { force: true });
      removed.push(`objects/pack/${file}`);
    }
  }
  return removed;
}

/** A shallow file lists commits, 41 bytes each: far fewer than this. */
const SHALLOW_MAX_BYTES = 64 * 1024 * 1024;

/** Adds `from`'s shallow commits to `into`'s: a depth-1 commit without its parents must stay marked shallow. */
async function adoptShallow(from: string, into: string): Promise<void> {
  const read = (dir: string) =>
    readBounded(path.join(dir, 'shallow'), SHALLOW_MAX_BYTES).then(
      (text) => text.split('\n').filter((line) => line !== ''),
      () => [] as string[],
    );
  const [theirs, ours] = await Promise.all([read(from), read(into)]);
  const merged = [...new Set([...ours, ...theirs])].sort();
  if (merged.length > ours.length)
    await writeFileAtomic(path.join(into, 'shallow'), `${merged.join('\n')}\n`);
}

/**
 * Brings a commit's objects back into a store that lost some (a pack deleted, a disk error): the commit is
 * fetched whole into a fresh store beside it, where nothing suggests to the remote that it is already held (the
 * damaged store's pins would), and that store's packs are moved in; packs whose index is not whole are removed
 * (returned). Its pin, and its tag's, are written again.
 */
export async function refetchCommit(
  repo: Repository,
  remote: Remote,
  commit: string,
  options: { paths: readonly string[]; linked?: Linked; tag?: string; settings?: GitSettings },
): Promise<string[]> {
  const temp = `${repo.gitdir.replace(/\.git$/, '')}.repair.git`;
  await fsp.rm(temp, { recursive: true, force: true });
  const fresh = await openStore(temp, options.settings);
  try {
    await fetchCommit(fresh, remote, commit, {
      paths: options.paths,
      linked: options.linked,
      tag: options.tag,
    });
    await fresh.close();
    await adoptPacks(temp, repo.gitdir);
    await adoptShallow(temp, repo.gitdir);
  } finally {
    await fresh.close();
    await fsp.rm(temp, { recursive: true, force: true });
  }
  const removed = await dropBrokenPacks(repo.gitdir);
  repo.refresh();
  await pinCommit(repo, commit, options.tag);
  return removed;
}
