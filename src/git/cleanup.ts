import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { messageOf } from '../shared/text.ts';
import { GitError } from './errors.ts';

const PACK_FILE = /^(pack-[0-9a-f]{40,64})\.(pack|idx|rev|promisor|keep|mtimes|bitmap)$/;

const list = (dir: string) => fsp.readdir(dir).catch(() => [] as string[]);

/** Lock files git leaves when it is killed: in the git dir and under refs/, at any depth. */
async function locks(dir: string, depth = 0): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await fsp.readdir(dir, { withFileTypes: true }).catch(() => [])) {
    const full = path.join(dir, entry.name);
    if (entry.isFile() && entry.name.endsWith('.lock')) found.push(full);
    else if (entry.isDirectory() && depth < 12 && (depth > 0 || entry.name === 'refs'))
      found.push(...(await locks(full, depth + 1)));
  }
  return found;
}

/**
 * Removes what a transfer that failed or was killed left in a store: git's temporary packs, indexes and loose
 * objects (`tmp_pack_*`, `tmp_idx_*`, `tmp_obj_*`), a pack without its index (isomorphic-git writes the pack
 * first), files of a pack that is gone, and stale `.lock` files. Call it only while no git writes to the store
 * (at open, or after a failed transfer). Returns what it removed, relative to the git dir, sorted.
 */
export async function removeIncomplete(gitdir: string): Promise<string[]> {
  const objects = path.join(gitdir, 'objects');
  const packDir = path.join(objects, 'pack');
  const names = await list(packDir);
  const present = new Set(names);
  const doomed: string[] = [];
  for (const name of names) {
    const match = PACK_FILE.exec(name);
    if (name.startsWith('tmp_') || name.startsWith('.tmp-')) doomed.push(path.join(packDir, name));
    else if (match !== null) {
      const base = match[1]!;
      if (!present.has(`${base}.pack`) || !present.has(`${base}.idx`)) doomed.push(path.join(packDir, name));
    }
  }
  for (const dir of await list(objects))
    if (dir.startsWith('incoming-')) doomed.push(path.join(objects, dir));
    else if (/^[0-9a-f]{2}$/.test(dir))
      for (const name of await list(path.join(objects, dir)))
        if (name.startsWith('tmp_obj_')) doomed.push(path.join(objects, dir, name));
  doomed.push(...(await locks(gitdir)));
  for (const file of doomed) await fsp.rm(file, { recursive: true, force: true });
  return doomed.map((file) => path.relative(gitdir, file)).sort();
}

/**
 * After a failed transfer: what it left in the store is removed at once (removeIncomplete), and named in the
 * error's log; the error is otherwise the same.
 */
export async function cleanedUp(gitdir: string, error: GitError): Promise<GitError> {
  const removed = await removeIncomplete(gitdir).catch((cleanup: unknown) => [
    `(cleanup: ${messageOf(cleanup)})`,
  ]);
  if (removed.length === 0) return error;
  const log = `${error.log ?? ''}${error.log === undefined ? '' : '; '}removed ${removed.join(', ')}`;
  return new GitError(error.code, error.message, { log, cause: error.cause });
}

/** The complete packs of a store (`pack-<sha>`, with both `.pack` and `.idx`). */
export async function packNames(gitdir: string): Promise<Set<string>> {
  const names = await list(path.join(gitdir, 'objects', 'pack'));
  return new Set(
    names
      .filter((name) => name.endsWith('.idx') && names.includes(`${name.slice(0, -4)}.pack`))
      .map((name) => name.slice(0, -4)),
  );
}

/**
 * Removes the packs a refused transfer brought (those not in `before`), each one's index first so that no reader
 * finds a pack that is going. Returns what it removed, relative to the git dir.
 */
export async function removePacksSince(gitdir: string, before: ReadonlySet<string>): Promise<string[]> {
  const packDir = path.join(gitdir, 'objects', 'pack');
  const names = await list(packDir);
  const removed: string[] = [];
  for (const pack of await packNames(gitdir)) {
    if (before.has(pack)) continue;
    const files = names.filter((name) => name.startsWith(`${pack}.`));
    for (const file of [`${pack}.idx`, ...files.filter((name) => name !== `${pack}.idx`)]) {
      await fsp.rm(path.join(packDir, file), { force: true });
      removed.push(`objects/pack/${file}`);
    }
  }
  return removed;
}
