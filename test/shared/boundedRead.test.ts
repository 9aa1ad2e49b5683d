import { execFileSync } from 'node:child_process';
import { truncateSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileRefusedError, readBounded, readBoundedSync } from '../../src/shared/boundedRead.ts';
import { tempDir } from '../helpers/temp.ts';

const MB300 = 300 * 1024 * 1024;

/** What `read` threw, as its reason and detail. */
async function refusal(read: () => unknown) {
  try {
    await read();
  } catch (error) {
    if (!(error instanceof FileRefusedError)) throw error;
    return { reason: error.reason, detail: error.detail };
  }
  throw new Error('not refused');
}

describe.each([
  ['readBoundedSync', readBoundedSync],
  ['readBounded', readBounded],
] as const)('%s', (_name, read) => {
  it('reads a file within its bound whole, and one of exactly the bound', async () => {
    const file = path.join(tempDir(), 'lease.json');
    writeFileSync(file, '{"pid":1}\n');
    expect(await read(file, 10)).toBe('{"pid":1}\n');
    expect(await read(file, 1_000)).toBe('{"pid":1}\n');
  });

  it('refuses a 300 MB sparse file by its size, before reading it', async () => {
    const file = path.join(tempDir(), 'huge.json');
    writeFileSync(file, '');
    truncateSync(file, MB300);
    expect(await refusal(() => read(file, 64 * 1024))).toEqual({
      reason: 'datadir-file-oversized',
      detail: `${MB300} bytes, more than the 65536 bytes such a file may have; not read`,
    });
  });

  it('reads at most bound + 1 bytes of a file whose size says less than it holds (/proc)', async () => {
    // /proc files say 0 bytes and hold more: what is read is all the reader learns of their size.
    expect(await refusal(() => read('/proc/self/status', 100))).toEqual({
      reason: 'datadir-file-oversized',
      detail: '101 bytes, more than the 100 bytes such a file may have; not read',
    });
    expect(await read('/proc/self/status', 1024 * 1024)).toMatch(/^Name:/);
  });

  it('refuses a FIFO without waiting for a writer, and a folder', async () => {
    const dir = tempDir();
    const fifo = path.join(dir, 'fifo.json');
    execFileSync('mkfifo', [fifo]);
    const notRegular = { reason: 'datadir-file-not-regular', detail: 'not a regular file; not read' };
    expect(await refusal(() => read(fifo, 1024))).toEqual(notRegular);
    expect(await refusal(() => read(dir, 1024))).toEqual(notRegular);
  });

  it('throws a missing file as fs does (ENOENT)', async () => {
    await expect(async () => read(path.join(tempDir(), 'none.json'), 10)).rejects.toThrow('ENOENT');
  });
});
