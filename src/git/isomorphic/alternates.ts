import { promises as fsp } from 'node:fs';
import path from 'node:path';
import type { ObjectDatabase } from './odb.ts';

/** How deep alternates that name alternates are followed (git's own limit). */
const MAX_ALTERNATE_DEPTH = 5;
/** The most of an `objects/info/alternates` file read: a line per store, never more than a few. */
const MAX_ALTERNATES_BYTES = 64 * 1024;

/** The stores `objects/info/alternates` of `objectsDir` names (relative lines from `objectsDir`, as git reads them). */
async function alternatesOf(objectsDir: string): Promise<string[]> {
  const file = await fsp.open(path.join(objectsDir, 'info', 'alternates'), 'r').catch(() => undefined);
  if (file === undefined) return [];
  try {
    const { buffer, bytesRead } = await file.read(
      Buffer.alloc(MAX_ALTERNATES_BYTES),
      0,
      MAX_ALTERNATES_BYTES,
      0,
    );
    return buffer
      .subarray(0, bytesRead)
      .toString('utf8')
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line !== '' && !line.startsWith('#'))
      .map((line) => path.resolve(objectsDir, line));
  } finally {
    await file.close();
  }
}

/**
 * The objects of the store `objectsDir` (`open` reads one store), then of the stores its alternates name, in their
 * order: what a clone made with `--shared` or `--reference` reads from its source. The list is read at the first
 * object the store itself lacks.
 */
export function withAlternates(
  objectsDir: string,
  open: (objectsDir: string) => ObjectDatabase,
  depth = 0,
): ObjectDatabase {
  const own = open(objectsDir);
  let borrowed: Promise<ObjectDatabase[]> | undefined;
  const others = () => {
    borrowed ??=
      depth >= MAX_ALTERNATE_DEPTH
        ? Promise.resolve([])
        : alternatesOf(objectsDir).then(
            (dirs) => dirs.map((dir) => withAlternates(dir, open, depth + 1)),
            // An alternates file that cannot be read names no store (git says nothing of it either).
            () => [],
          );
    return borrowed;
  };
  const first = async <T>(ask: (store: ObjectDatabase) => Promise<T | undefined>): Promise<T | undefined> => {
    const mine = await ask(own);
    if (mine !== undefined) return mine;
    for (const store of await others()) {
      const found = await ask(store);
      if (found !== undefined) return found;
    }
    return undefined;
  };
  return {
    read: (oid) => first((store) => store.read(oid)),
    sizeOf: (oid) => first((store) => store.sizeOf(oid)),
    has: async (oid) => (await first(async (store) => ((await store.has(oid)) ? true : undefined))) === true,
    refresh() {
      own.refresh();
      void borrowed?.then((stores) => {
        for (const store of stores) store.refresh();
      });
    },
    async close() {
      const stores = (await borrowed?.catch(() => [])) ?? [];
      borrowed = undefined;
      await Promise.allSettled([own.close(), ...stores.map((store) => store.close())]);
    },
  };
}
