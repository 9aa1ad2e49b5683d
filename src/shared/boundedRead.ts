import { closeSync, constants, fstatSync, openSync, promises as fsp, readSync } from 'node:fs';

/** Why a file was not read: larger than its bound, or not a regular file (a FIFO, a device, a folder). */
export class FileRefusedError extends Error {
  readonly reason: 'datadir-file-oversized' | 'datadir-file-not-regular';
  /** What is wrong, without the path: `${size} bytes, more than …`. */
  readonly detail: string;
  constructor(
    readonly file: string,
    readonly max: number,
    size: number | undefined,
  ) {
    const detail =
      size === undefined
        ? 'not a regular file; not read'
        : `${size} bytes, more than the ${max} bytes such a file may have; not read`;
    super(`${file}: ${detail}`);
    this.detail = detail;
    this.name = 'FileRefusedError';
    this.reason = size === undefined ? 'datadir-file-not-regular' : 'datadir-file-oversized';
  }
}

// Non-blocking open: a FIFO put in place of a file never stalls the process; fstat then refuses it.
const FLAGS = constants.O_RDONLY | constants.O_NONBLOCK;

/**
 * The text of `file` when it is a regular file of at most `max` bytes: FileRefusedError otherwise, before more
 * than `max + 1` bytes are read. Other errors (ENOENT) are thrown as `fs` throws them.
 */
export function readBoundedSync(file: string, max: number): string {
  const fd = openSync(file, FLAGS);
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new FileRefusedError(file, max, undefined);
    if (stat.size > max) throw new FileRefusedError(file, max, stat.size);
    // One byte past what fstat said: a file that grows while read is seen to, and never past `max + 1`.
    const buffer = Buffer.alloc(Math.min(stat.size, max) + 1);
    let at = 0;
    for (let n = -1; n !== 0 && at < buffer.length; at += n)
      n = readSync(fd, buffer, at, buffer.length - at, null);
    if (at > max) throw new FileRefusedError(file, max, at);
    return buffer.subarray(0, at).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/** readBoundedSync without holding the event loop: the same bound and refusals. */
export async function readBounded(file: string, max: number): Promise<string> {
  const handle = await fsp.open(file, FLAGS);
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw new FileRefusedError(file, max, undefined);
    if (stat.size > max) throw new FileRefusedError(file, max, stat.size);
    const buffer = Buffer.alloc(Math.min(stat.size, max) + 1);
    let at = 0;
    for (let n = -1; n !== 0 && at < buffer.length; at += n)
      ({ bytesRead: n } = await handle.read(buffer, at, buffer.length - at, null));
    if (at > max) throw new FileRefusedError(file, max, at);
    return buffer.subarray(0, at).toString('utf8');
  } finally {
    await handle.close();
  }
}
