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
/** What is read at a time once a file passes the size fstat gave (it grew, or says 0 like /proc). */
const CHUNK_BYTES = 64 * 1024;

/**
 * Reads `read` to its end in chunks, never more than `max + 1` bytes in all: the first chunk is `size + 1`. A read
 * that returns less than it asked for, once `size` bytes (more than none) are in, is the end: no further read (and
 * no buffer for it) is needed to find it. A file whose size says 0 is read until a read returns nothing.
 */
function* chunks(size: number, max: number): Generator<number, void, number> {
  let total = 0;
  for (let want = Math.min(size, max) + 1; total <= max; want = CHUNK_BYTES) {
    const asked = Math.min(want, max + 1 - total);
    const n = yield asked;
    if (n === 0) return;
    total += n;
    if (n < asked && size > 0 && total >= size) return;
  }
}

/** Refuses `file` by what fstat says of it: not a regular file, or larger than `max`. */
function check(file: string, max: number, stat: { isFile(): boolean; size: number }): void {
  if (!stat.isFile()) throw new FileRefusedError(file, max, undefined);
  if (stat.size > max) throw new FileRefusedError(file, max, stat.size);
}

/** The bytes read; refused when they pass `max` (then `max + 1` were read, no more). */
function bytesOf(file: string, max: number, parts: Buffer[]): Buffer {
  // One read is the common case: its buffer as it is, not a copy.
  const bytes = parts.length === 1 ? parts[0]! : Buffer.concat(parts);
  if (bytes.length > max) throw new FileRefusedError(file, max, bytes.length);
  return bytes;
}

/**
 * The text of `file` when it is a regular file of at most `max` bytes: FileRefusedError otherwise, before more
 * than `max + 1` bytes are read. Other errors (ENOENT) are thrown as `fs` throws them.
 */
export function readBoundedSync(file: string, max: number): string {
  const fd = openSync(file, FLAGS);
  try {
    const stat = fstatSync(fd);
    check(file, max, stat);
    const parts: Buffer[] = [];
    const plan = chunks(stat.size, max);
    for (let step = plan.next(); !step.done; ) {
      const buffer = Buffer.allocUnsafe(step.value);
      const n = readSync(fd, buffer, 0, buffer.length, null);
      parts.push(buffer.subarray(0, n));
      step = plan.next(n);
    }
    return bytesOf(file, max, parts).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/** readBoundedSync without holding the event loop: the same bound and refusals. */
export async function readBounded(file: string, max: number): Promise<string> {
  return (await readBoundedBytes(file, max)).toString('utf8');
}

/** readBounded's bytes, for a file that is not text. */
export async function readBoundedBytes(file: string, max: number): Promise<Buffer> {
  const handle = await fsp.open(file, FLAGS);
  try {
    const stat = await handle.stat();
    check(file, max, stat);
    const parts: Buffer[] = [];
    const plan = chunks(stat.size, max);
    for (let step = plan.next(); !step.done; ) {
      const buffer = Buffer.allocUnsafe(step.value);
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
      parts.push(buffer.subarray(0, bytesRead));
      step = plan.next(bytesRead);
    }
    return bytesOf(file, max, parts);
  } finally {
    await handle.close();
  }
}
