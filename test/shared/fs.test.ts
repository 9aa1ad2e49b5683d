import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { promises as fsp } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  latestWins,
  makeDirectory,
  makeDirectorySync,
  osReason,
  writeFileAtomic,
  type WriteFs,
} from '../../src/shared/fs.ts';

const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'skillpin-fs-'));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Node's fs, recording each step, and failing the data write with `failWrite` when set. */
function recordingFs(failWrite?: NodeJS.ErrnoException) {
  const steps: string[] = [];
  const fs: WriteFs = {
    mkdir: ((dir: string, options: object) => {
      steps.push('mkdir');
      return fsp.mkdir(dir, options);
    }) as WriteFs['mkdir'],
    async open(file: string, flags: string) {
      const handle = await fsp.open(file, flags);
      const what = file.endsWith('.tmp') ? 'temp' : 'dir';
      steps.push(`open ${what} ${flags}`);
      return Object.assign(Object.create(handle) as typeof handle, {
        writeFile: async (data: string) => {
          steps.push('write');
          if (failWrite !== undefined) throw failWrite;
          return handle.writeFile(data);
        },
        sync: async () => {
          steps.push(`sync ${what}`);
          return handle.sync();
        },
        close: async () => handle.close(),
      });
    },
    rename: async (from: string, to: string) => {
      steps.push('rename');
      return fsp.rename(from, to);
    },
    rm: async (file: string, options?: object) => {
      steps.push('rm temp');
      return fsp.rm(file, options);
    },
  } as WriteFs;
  return { fs, steps };
}

describe('writeFileAtomic', () => {
  it('writes a temp file of its own, syncs it, renames it into place, then syncs the folder', async () => {
    const file = path.join(tempDir(), 'deep', 'state.json');
    const { fs, steps } = recordingFs();
    await writeFileAtomic(file, 'one\n', fs);
    expect(steps).toEqual([
      'mkdir',
      'open temp wx',
      'write',
      'sync temp',
      'rename',
      'open dir r',
      'sync dir',
    ]);
    expect([readFileSync(file, 'utf8'), readdirSync(path.dirname(file))]).toEqual(['one\n', ['state.json']]);
  });

  it('on a full disk: rejects with ENOSPC, removes its temp file and leaves the old file whole', async () => {
    const file = path.join(tempDir(), 'state.json');
    writeFileSync(file, 'old\n');
    const full = Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    const { fs, steps } = recordingFs(full);
    await expect(writeFileAtomic(file, 'new\n', fs)).rejects.toBe(full);
    expect(steps).toEqual(['mkdir', 'open temp wx', 'write', 'rm temp']);
    expect([readFileSync(file, 'utf8'), readdirSync(path.dirname(file))]).toEqual(['old\n', ['state.json']]);
  });
});

describe('writeFileAtomic, called 2000 times at once for one file', () => {
  it('rejects none, leaves one of the texts whole and no temp file', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'index.json');
    const texts = Array.from(
      { length: 2000 },
      (_, i) => `${JSON.stringify({ i, pad: 'x'.repeat(i % 7 === 0 ? 4000 : 10) })}\n`,
    );
    const results = await Promise.allSettled(texts.map((text) => writeFileAtomic(file, text)));
    expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
    expect(texts).toContain(readFileSync(file, 'utf8'));
    expect(readdirSync(dir)).toEqual(['index.json']);
  });
});

describe('latestWins', () => {
  /** A write that finishes when the test says. */
  function gatedWrite() {
    const calls: Array<{ text: string; finish(error?: Error): void }> = [];
    const write = (text: string) =>
      new Promise<void>((resolve, reject) => {
        calls.push({ text, finish: (error) => (error === undefined ? resolve() : reject(error)) });
      });
    return { calls, write };
  }

  it('writes one at a time, and of the texts asked for during a write only the latest', async () => {
    const { calls, write } = gatedWrite();
    const serial = latestWins(write);
    const settled: string[] = [];
    const asks = ['a', 'b', 'c', 'd'].map((text) => serial(text).then(() => void settled.push(text)));
    expect(calls.map((c) => c.text)).toEqual(['a']);
    calls[0]!.finish();
    await new Promise((resolve) => setImmediate(resolve));
    expect([calls.map((c) => c.text), settled]).toEqual([['a', 'd'], ['a']]);
    calls[1]!.finish();
    await Promise.all(asks);
    expect(settled).toEqual(['a', 'b', 'c', 'd']);
  });

  it('rejects exactly the callers whose text the failed write carried', async () => {
    const { calls, write } = gatedWrite();
    const serial = latestWins(write);
    const first = serial('a');
    const second = serial('b');
    const third = serial('c');
    calls[0]!.finish();
    await first;
    const full = new Error('ENOSPC');
    calls[1]!.finish(full);
    await expect(second).rejects.toBe(full);
    await expect(third).rejects.toBe(full);
    const fourth = serial('d');
    calls[2]!.finish();
    await fourth;
    expect(calls.map((c) => c.text)).toEqual(['a', 'c', 'd']);
  });
});

describe('makeDirectory', () => {
  const caught = (make: () => void): unknown => {
    try {
      make();
    } catch (error) {
      return error;
    }
    return undefined;
  };

  it('creates a folder and its missing parents, and leaves one that exists', async () => {
    const root = tempDir();
    makeDirectorySync(path.join(root, 'a', 'b', 'c'));
    await makeDirectory(path.join(root, 'x', 'y'));
    makeDirectorySync(path.join(root, 'a', 'b'));
    await makeDirectory(path.join(root, 'x'));
    expect([
      statSync(path.join(root, 'a', 'b', 'c')).isDirectory(),
      existsSync(path.join(root, 'x', 'y')),
    ]).toEqual([true, true]);
  });

  // Node's recursive mkdir never returns here: /proc/<name> is ENOENT while /proc exists. Root too is refused.
  it('fails under /proc with ENOENT for the first folder that cannot be made, where recursive mkdir loops', async () => {
    const under = `/proc/skillpin-test-${process.pid}/data/more`;
    const sync = caught(() => makeDirectorySync(under));
    const async = await makeDirectory(under).catch((error: unknown) => error);
    for (const error of [sync, async])
      expect(osReason(error)).toBe(
        `mkdir /proc/skillpin-test-${process.pid}: no such file or directory (ENOENT)`,
      );
  });

  it('says what is in the way when a parent is a file', () => {
    const file = path.join(tempDir(), 'file');
    writeFileSync(file, '');
    expect(osReason(caught(() => makeDirectorySync(path.join(file, 'data'))))).toBe(
      `mkdir ${file}/data: not a directory (ENOTDIR)`,
    );
  });
});
