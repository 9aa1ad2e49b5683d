import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { deflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { packWriter } from '../../src/git/isomorphic/packWriter.ts';
import { MAX_LARGE_BLOB_BYTES, MAX_OBJECT_BYTES } from '../../src/git/limits.ts';
import { BLOB, OFS_DELTA, REF_DELTA } from '../../src/git/packEntry.ts';
import {
  deltaOversized,
  type TransferLimits,
  transferGuard,
  transferSizeRule,
} from '../../src/git/packGuard.ts';
import { INFLATED_PER_TURN } from '../../src/git/turns.ts';
import { tempDir } from '../helpers/temp.ts';

const LIMITS: TransferLimits = { maxBytes: 1 << 30, maxObjects: 1000, deadlineMs: 60_000 };

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

/** A version 2 pack's header, declaring `count` objects. */
function start(count: number): Buffer {
  const bytes = Buffer.alloc(12);
  bytes.write('PACK', 0, 'latin1');
  bytes.writeUInt32BE(2, 4);
  bytes.writeUInt32BE(count, 8);
  return bytes;
}

/** A pack of `entries` (header and deflated data each), with its trailer. */
function pack(entries: Buffer[]): Buffer {
  const body = Buffer.concat([start(entries.length), ...entries]);
  return Buffer.concat([body, createHash('sha1').update(body).digest()]);
}

const blob = (content: Buffer, declared = content.length) =>
  Buffer.concat([header(3, declared), deflateSync(content)]);

/** Pushes `bytes` in pieces of `piece` bytes as one pack of a transfer: what the guard said, and the pushes it took. */
function followed(bytes: Buffer, piece: number, guard = transferGuard(LIMITS)) {
  const pack = guard.pack();
  let pushes = 0;
  for (let at = 0; at < bytes.length && !pack.done(); ) {
    pushes++;
    const { used, refused } = pack.push(bytes.subarray(at, Math.min(bytes.length, at + piece)));
    if (refused !== undefined) return { refused: { reason: refused.reason, facts: refused.facts }, pushes };
    at += used;
  }
  return { done: pack.done(), pushes };
}

const tooLarge = (facts = {}) => ({ refused: { reason: 'source-too-large', facts } });

describe('the pack guard (both backends feed it)', () => {
  it('follows a pack to its trailer whether its bytes come whole or one at a time', () => {
    const bytes = pack([
      blob(Buffer.from('small')),
      blob(Buffer.alloc(2 * 1024 * 1024, 'a')),
      blob(Buffer.from('')),
    ]);
    expect(followed(bytes, bytes.length).done).toBe(true);
    expect(followed(bytes, 1).done).toBe(true);
  });

  it('stops at an object that inflates past its own header’s size, small or large: a corrupt pack', () => {
    for (const content of [Buffer.alloc(100, 'x'), Buffer.alloc(3 * 1024 * 1024, 'x')])
      for (const piece of [1 << 20, 7])
        expect(followed(pack([blob(content, content.length - 1)]), piece)).toMatchObject({
          refused: { reason: 'source-pack-invalid', facts: {} },
        });
  });

  it('keeps a blob over MAX_OBJECT_BYTES, inflating it in pushes of about INFLATED_PER_TURN', () => {
    const size = MAX_OBJECT_BYTES + 1;
    const bytes = pack([Buffer.concat([header(3, size), deflateSync(Buffer.alloc(size))])]);
    const { done, pushes } = followed(bytes, bytes.length);
    expect(done).toBe(true);
    expect(pushes).toBeGreaterThanOrEqual(Math.floor(size / INFLATED_PER_TURN));
  });

  it('refuses a pack whose header declares more than maxObjects, before any object', () => {
    const bytes = pack([blob(Buffer.from('a')), blob(Buffer.from('b'))]);
    expect(followed(bytes, 12, transferGuard({ ...LIMITS, maxObjects: 1 }))).toEqual({
      refused: { reason: 'source-too-large', facts: { maxObjects: 1 } },
      pushes: 1,
    });
    expect(followed(bytes, 12, transferGuard({ ...LIMITS, maxObjects: 2 })).done).toBe(true);
  });

  it('refuses the bytes past maxBytes, and answers every later question with that first refusal', () => {
    const guard = transferGuard({ ...LIMITS, maxBytes: 100 });
    expect(guard.received(100)).toBeUndefined();
    expect(guard.received(101)).toEqual({
      reason: 'source-too-large',
      facts: { maxBytes: 100 },
      why: '101 bytes came',
    });
    expect(guard.objects(10_000)?.facts).toEqual({ maxBytes: 100 });
    expect(followed(pack([blob(Buffer.from('a'))]), 7, guard)).toMatchObject(tooLarge({ maxBytes: 100 }));
  });

  it('refuses a pack pushed after the deadline, source-timeout', () => {
    let now = 1_000;
    const guard = transferGuard({ ...LIMITS, deadlineMs: 500, now: () => now });
    const bytes = pack([blob(Buffer.from('a')), blob(Buffer.from('b'))]);
    const following = guard.pack();
    expect(following.push(bytes.subarray(0, 14)).refused).toBeUndefined();
    expect(guard.remainingMs()).toBe(500);
    now += 500;
    expect(guard.remainingMs()).toBe(0);
    expect(following.push(bytes.subarray(14)).refused).toEqual({
      reason: 'source-timeout',
      facts: { deadlineMs: 500 },
      why: 'deadline',
    });
  });

  it('counts the large blobs of every pack of one transfer together', () => {
    const guard = transferGuard(LIMITS);
    const declared = (size: number) => Buffer.concat([start(1), header(3, size)]);
    // Each pack's header declares a blob of half of MAX_LARGE_BLOB_BYTES and one byte: each alone is kept.
    const half = MAX_LARGE_BLOB_BYTES / 2 + 1;
    expect(guard.pack().push(declared(half)).refused).toBeUndefined();
    expect(guard.pack().push(declared(half)).refused).toEqual({
      reason: 'source-too-large',
      facts: { largeBlobs: true },
      why: `a blob of ${half} bytes takes the transfer's blobs over ${MAX_OBJECT_BYTES} bytes past ${MAX_LARGE_BLOB_BYTES}`,
    });
  });

  it('stops following a pack it cannot read (source-pack-invalid), and refuses nothing else of the transfer for it', () => {
    const guard = transferGuard(LIMITS);
    const cases = [
      Buffer.concat([start(1), Buffer.alloc(65, 0xff)]),
      Buffer.concat([start(1), Buffer.from([0x50, 0])]),
      Buffer.from('NOTAPACK\0\0\0\x01'),
      Buffer.concat([pack([]), Buffer.from('x')]),
    ];
    const whys = cases.map((bytes) => {
      const following = guard.pack();
      const { refused } = following.push(bytes);
      return [refused?.reason, refused?.why, following.done()];
    });
    expect(whys).toEqual([
      ['source-pack-invalid', 'bad object header at 12', true],
      ['source-pack-invalid', 'unknown object type 5 at 12', true],
      ['source-pack-invalid', 'not a version 2 pack', true],
      ['source-pack-invalid', 'bytes after the pack trailer', true],
    ]);
    expect(guard.refused()).toBeUndefined();
  });
});

describe('the size rule of a transfer', () => {
  it('refuses a commit, tree, tag or delta over MAX_OBJECT_BYTES, and keeps blobs up to MAX_LARGE_BLOB_BYTES together', () => {
    const rule = transferSizeRule();
    for (const type of [1, 2, 4, OFS_DELTA, REF_DELTA]) {
      expect(rule(type, MAX_OBJECT_BYTES)).toBeUndefined();
      expect(rule(type, MAX_OBJECT_BYTES + 1)?.facts).toEqual({});
    }
    // Blobs up to MAX_OBJECT_BYTES are not counted; those over it are, together.
    expect(rule(BLOB, MAX_OBJECT_BYTES)).toBeUndefined();
    expect(rule(BLOB, MAX_LARGE_BLOB_BYTES - MAX_OBJECT_BYTES)).toBeUndefined();
    expect(rule(BLOB, MAX_OBJECT_BYTES)).toBeUndefined();
    expect(rule(BLOB, MAX_OBJECT_BYTES + 1)?.facts).toEqual({ largeBlobs: true });
    // Each transfer counts its own.
    expect(transferSizeRule()(BLOB, MAX_LARGE_BLOB_BYTES)).toBeUndefined();
    expect(transferSizeRule()(BLOB, MAX_LARGE_BLOB_BYTES + 1)?.facts).toEqual({ largeBlobs: true });
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
    const guard = transferGuard({ ...LIMITS, maxObjects: 1 });
    const writer = packWriter({ gitdir, baseById: async () => undefined, guard });
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
