import { randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import path from 'node:path';

/** The file operations an atomic write needs: Node's, or in tests a fake that fails like a full disk. */
export type WriteFs = Pick<typeof fsp, 'mkdir' | 'open' | 'rename' | 'rm'>;

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
  await fs.mkdir(dir, { recursive: true });
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
