import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { deflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { packScanner } from '../../src/git/cli/packScan.ts';
import { packWriter } from '../../src/git/isomorphic/packWriter.ts';
import { MAX_LARGE_BLOB_BYTES, MAX_OBJECT_BYTES } from '../../src/git/limits.ts';
import { BLOB, deltaOversized, OFS_DELTA, REF_DELTA, transferSizeRule } from '../../src/git/packEntry.ts';
import { INFLATED_PER_TURN } from '../../src/git/turns.ts';
import { tempDir } from '../helpers/temp.ts';

/** A pack entry's header: type in bits 4-6 of the first byte, the size in base-128 after its low four bits. */
function header(type: number, size: number): Buffer {
  const bytes: number[] = [];
  let byte = (type << 4) | (size & 0x0f);
  for (let rest = Math.floor(size / 16); rest > 0; rest = Math.floor(rest / 128)) {
    bytes.push(byte | 0x80);
    byte = rest & 0x7f;
  }
  bytes.push(byte);
  return Buffer.from(bytes);
}

/** A pack of `entries` (header and deflated data each), with its trailer. */
function pack(entries: Buffer[]): Buffer {
  const start = Buffer.alloc(12);
  start.write('PACK', 0, 'latin1');
  start.writeUInt32BE(2, 4);
  start.writeUInt32BE(entries.length, 8);
  const body = Buffer.concat([start, ...entries]);
  return Buffer.concat([body, createHash('sha1').update(body).digest()]);
}

const blob = (content: Buffer, declared = content.length) =>
  Buffer.concat([header(3, declared), deflateSync(content)]);

/** Pushes `bytes` in pieces of `piece` bytes as a scan takes them: what it said, and how many pushes it took. */
function scanned(bytes: Buffer, piece: number) {
  const scan = packScanner();
  let pushes = 0;
  for (let at = 0; at < bytes.length && !scan.done(); pushes++) {
    const { used, oversized } = scan.push(bytes.subarray(at, Math.min(bytes.length, at + piece)));
    if (oversized !== undefined) return { oversized, at: at + used, pushes };
    at += used;
  }
  return { done: scan.done(), pushes };
}

describe('the cli backend’s pack scan', () => {
  it('follows a pack to its end whether its bytes come whole or one at a time', () => {
    const bytes = pack([
      blob(Buffer.from('small')),
      blob(Buffer.alloc(2 * 1024 * 1024, 'a')),
      blob(Buffer.from('')),
    ]);
    expect(scanned(bytes, bytes.length).done).toBe(true);
    expect(scanned(bytes, 1).done).toBe(true);
  });

  it('refuses an object that inflates past its own header’s size, small or large', () => {
    for (const content of [Buffer.alloc(100, 'x'), Buffer.alloc(3 * 1024 * 1024, 'x')])
      for (const piece of [1 << 20, 7])
        expect(scanned(pack([blob(content, content.length - 1)]), piece).oversized).toBe('object');
  });

  it('keeps a blob over MAX_OBJECT_BYTES, inflating it in pushes of about INFLATED_PER_TURN', () => {
    const size = MAX_OBJECT_BYTES + 1;
    const bytes = pack([Buffer.concat([header(3, size), deflateSync(Buffer.alloc(size))])]);
    const { done, pushes } = scanned(bytes, bytes.length);
    expect(done).toBe(true);
    expect(pushes).toBeGreaterThanOrEqual(Math.floor(size / INFLATED_PER_TURN));
  });
});

describe('the size rule of a transfer (both backends)', () => {
  it('refuses a commit, tree, tag or delta over MAX_OBJECT_BYTES, and keeps blobs up to MAX_LARGE_BLOB_BYTES together', () => {
    const rule = transferSizeRule();
    for (const type of [1, 2, 4, OFS_DELTA, REF_DELTA]) {
      expect(rule(type, MAX_OBJECT_BYTES)).toBeUndefined();
      expect(rule(type, MAX_OBJECT_BYTES + 1)).toBe('object');
    }
    // Blobs up to MAX_OBJECT_BYTES are not counted; those over it are, together.
    expect(rule(BLOB, MAX_OBJECT_BYTES)).toBeUndefined();
    expect(rule(BLOB, MAX_LARGE_BLOB_BYTES - MAX_OBJECT_BYTES)).toBeUndefined();
    expect(rule(BLOB, MAX_OBJECT_BYTES)).toBeUndefined();
    expect(rule(BLOB, MAX_OBJECT_BYTES + 1)).toBe('large-blobs');
    // Each transfer counts its own.
    expect(transferSizeRule()(BLOB, MAX_LARGE_BLOB_BYTES)).toBeUndefined();
    expect(transferSizeRule()(BLOB, MAX_LARGE_BLOB_BYTES + 1)).toBe('large-blobs');
  });

  it('refuses a delta whose header needs a base or builds an object over MAX_OBJECT_BYTES', () => {
    const sizes = (base: number, result: number) => {
      const bytes: number[] = [];
      for (const size of [base, result]) {
        let rest = size;
        for (; rest >= 128; rest = Math.floor(rest / 128)) bytes.push((rest & 0x7f) | 0x80);
        bytes.push(rest);
      }
      return Uint8Array.from(bytes);
    };
    expect(deltaOversized(sizes(MAX_OBJECT_BYTES, MAX_OBJECT_BYTES))).toBe(false);
    expect(deltaOversized(sizes(MAX_OBJECT_BYTES + 1, 10))).toBe(true);
    expect(deltaOversized(sizes(10, MAX_OBJECT_BYTES + 1))).toBe(true);
  });
});

describe('the isomorphic backend’s pack writer', () => {
  it('writes and indexes a blob over MAX_OBJECT_BYTES, letting the event loop run while it inflates it', async () => {
    const size = MAX_OBJECT_BYTES + 1;
    const bytes = pack([Buffer.concat([header(3, size), deflateSync(Buffer.alloc(size))])]);
    const gitdir = tempDir('skillpin-packwriter-');
    const writer = packWriter({ gitdir, baseById: async () => undefined, maxObjects: 1 });
    // A tick of the event loop counted at each of its turns, for as long as the write takes.
    let turns = 0;
    let writing = true;
    const tick = () => {
      turns++;
      if (writing) setImmediate(tick);
    };
    setImmediate(tick);
    await writer.write(bytes);
    writing = false;
    await writer.finish();
    // The 64 MiB are inflated in slices: a turn of the event loop at least every INFLATED_PER_TURN.
    expect(turns).toBeGreaterThanOrEqual(Math.floor(size / INFLATED_PER_TURN));
    const id = createHash('sha1').update(`blob ${size}\0`).update(Buffer.alloc(size)).digest('hex');
    const files = readdirSync(path.join(gitdir, 'objects', 'pack'));
    expect(files.map((file) => path.extname(file)).sort()).toEqual(['.idx', '.pack']);
    // The pack's index names the blob by the id its bytes hash to.
    const idx = files.find((file) => file.endsWith('.idx'))!;
    expect(readFileSync(path.join(gitdir, 'objects', 'pack', idx)).includes(Buffer.from(id, 'hex'))).toBe(
      true,
    );
  });
});
