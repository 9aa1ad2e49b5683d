import { randomBytes } from 'node:crypto';
import { mkdirSync, promises as fsp } from 'node:fs';
import path from 'node:path';

/** The file operations an atomic write needs: Node's, or in tests a fake that fails like a full disk. */
export type WriteFs = Pick<typeof fsp, 'mkdir' | 'open' | 'rename' | 'rm'>;

const codeOf = (error: unknown) => (error as NodeJS.ErrnoException).code;

/** Whether `error` is the OS refusing a file operation (it has an errno code), not a bug. */
export const isOsError = (error: unknown): boolean =>
  typeof (error as NodeJS.ErrnoException | null)?.code === 'string' &&
  typeof (error as NodeJS.ErrnoException).syscall === 'string';

/** The OS's words for a failed file operation, in one line: `mkdir /x/y: no such file or directory (ENOENT)`. */
export function osReason(error: unknown): string {
  const { code, syscall, path: file, message } = error as NodeJS.ErrnoException;
  const first = String(message).split('\n', 1)[0]!;
  if (code === undefined) return first;
  // Node's own form is `CODE: words, syscall 'path'`.
  const words = first.startsWith(`${code}: `) ? first.slice(code.length + 2).split(`, ${syscall}`)[0] : first;
  const what = [syscall, file].filter((part) => part !== undefined).join(' ');
  return `${what === '' ? '' : `${what}: `}${words} (${code})`;
}

/**
 * Creates `dir` and its missing parents, as `mkdir -p`. Node's `recursive: true` never returns where a parent
 * exists but refuses children with ENOENT (under /proc it loops forever); here the second ENOENT is the error.
 * A file in the way is left for the first write into the folder to report (ENOTDIR).
 */
export function makeDirectorySync(dir: string): void {
  try {
    mkdirSync(dir);
    return;
  } catch (error) {
    if (codeOf(error) === 'EEXIST') return;
    if (codeOf(error) !== 'ENOENT' || path.dirname(dir) === dir) throw error;
  }
  makeDirectorySync(path.dirname(dir));
  try {
    mkdirSync(dir);
  } catch (error) {
    if (codeOf(error) !== 'EEXIST') throw error;
  }
}

/** `makeDirectorySync`, with `fs.mkdir`. */
export async function makeDirectory(dir: string, fs: Pick<WriteFs, 'mkdir'> = fsp): Promise<void> {
  try {
    await fs.mkdir(dir);
    return;
  } catch (error) {
    if (codeOf(error) === 'EEXIST') return;
    if (codeOf(error) !== 'ENOENT' || path.dirname(dir) === dir) throw error;
  }
  await makeDirectory(path.dirname(dir), fs);
  try {
    await fs.mkdir(dir);
  } catch (error) {
    if (codeOf(error) !== 'EEXIST') throw error;
  }
}

/**
 * Writes `text` so that readers see the old file or the new one, never a part: a temp file of its own, fsync,
 * rename, then fsync of the folder so the rename survives a power cut. A failed write leaves no temp file.
 */
export async function writeFileAtomic(
  file: string,
  text: string | Uint8Array,
  fs: WriteFs = fsp,
): Promise<void> {
  const dir = path.dirname(file);
  await makeDirectory(dir, fs);
  // Unique per call: two writes of one file, in one process or two, never share a temp file.
  const temp = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    const handle = await fs.open(temp, 'wx');
    try {
      await handle.writeFile(text);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fs.rename(temp, file);
  } catch (error) {
    await fs.rm(temp, { force: true }).catch(() => undefined);
    throw error;
  }
  const folder = await fs.open(dir, 'r');
  try {
    await folder.sync();
  } finally {
    await folder.close();
  }
}

/**
 * Serialises the writes of one file: one runs at a time, and a write asked for while one runs replaces any
 * that is still waiting (the latest text wins). Each caller's promise settles with the write that carries its
 * text or a later text, so every write is awaited and its error reaches the caller.
 */
export function latestWins(write: (text: string) => Promise<void>): (text: string) => Promise<void> {
  type Waiter = { resolve: () => void; reject: (error: unknown) => void };
  let waiting: { text: string; waiters: Waiter[] } | undefined;
  let draining = false;
  const drain = async () => {
    draining = true;
    while (waiting !== undefined) {
      const batch = waiting;
      waiting = undefined;
      try {
        await write(batch.text);
        for (const waiter of batch.waiters) waiter.resolve();
      } catch (error) {
        for (const waiter of batch.waiters) waiter.reject(error);
      }
    }
    draining = false;
  };
  return (text) =>
    new Promise<void>((resolve, reject) => {
      waiting = { text, waiters: [...(waiting?.waiters ?? []), { resolve, reject }] };
      if (!draining) void drain();
    });
}
