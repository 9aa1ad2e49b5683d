import { describe, expect, it } from 'vitest';
import { blobsReader, GitError } from '../../src/git/index.ts';
import { objectTooLarge } from '../../src/git/failure.ts';
import type { GitObject } from '../../src/git/objects.ts';
import type { Repository } from '../../src/git/repository.ts';

const A = 'a'.repeat(40);
const B = 'b'.repeat(40);
const C = 'c'.repeat(40);
const blob = (text: string): GitObject => ({ type: 'blob', data: Buffer.from(text) });

/** A store whose stream answers in order and, with `stream.fails`, fails at that object with that error. */
function store(
  objects: Record<string, GitObject>,
  stream: { failsAt?: string; error?: Error } = {},
): Repository & { oneByOne: string[] } {
  const oneByOne: string[] = [];
  return {
    oneByOne,
    refresh: () => undefined,
    async readObject(oid: string) {
      oneByOne.push(oid);
      return objects[oid];
    },
    async readEach(oids: readonly string[], each: (oid: string, found: GitObject | undefined) => void) {
      for (const oid of oids) {
        if (oid === stream.failsAt) throw stream.error;
        each(oid, objects[oid]);
      }
    },
  } as unknown as Repository & { oneByOne: string[] };
}

async function delivered(repo: Repository, oids: string[]): Promise<string[]> {
  const got: string[] = [];
  await blobsReader(repo)!(oids, (oid, data) => got.push(`${oid[0]}:${Buffer.from(data).toString()}`));
  return got;
}

describe('blobsReader', () => {
  it('is for a backend that streams reads only', () => {
    expect(blobsReader({ readObject: async () => undefined } as unknown as Repository)).toBeUndefined();
  });

  it('hands every blob over as the stream gives it, reading none one by one', async () => {
    const repo = store({ [A]: blob('A'), [B]: blob('B') });
    expect(await delivered(repo, [A, B])).toEqual(['a:A', 'b:B']);
    expect(repo.oneByOne).toEqual([]);
  });

  it('reads one by one, as readBlob does, what the stream had not answered when it broke', async () => {
    const repo = store(
      { [A]: blob('A'), [B]: blob('B'), [C]: blob('C') },
      { failsAt: B, error: new Error('git cat-file ended (SIGKILL)') },
    );
    expect(await delivered(repo, [A, B, C])).toEqual(['a:A', 'b:B', 'c:C']);
    expect(repo.oneByOne).toEqual([B, C]);
  });

  it('fails as readBlob does for a blob the store lacks or that is not a blob', async () => {
    const missing = await delivered(store({ [A]: blob('A') }), [A, B]).catch((error: GitError) => error);
    expect(missing).toBeInstanceOf(GitError);
    expect({ code: (missing as GitError).code, message: (missing as GitError).message }).toEqual({
      code: 'source-incomplete',
      message: `blob ${B} is missing or unreadable`,
    });
    const tree = await delivered(store({ [A]: { type: 'tree', data: Buffer.alloc(0) } }), [A]).catch(
      (error: GitError) => error,
    );
    expect((tree as GitError).code).toBe('source-incomplete');
  });

  it('throws a GitError of the stream as it is (an object over the limit is not asked again)', async () => {
    const tooLarge = objectTooLarge(`object ${B}`, 2 ** 30);
    const repo = store({ [A]: blob('A'), [B]: blob('B') }, { failsAt: B, error: tooLarge });
    await expect(delivered(repo, [A, B])).rejects.toBe(tooLarge);
    expect(repo.oneByOne).toEqual([]);
  });

  it('throws what the receiver threw, and hands nothing more over', async () => {
    const repo = store({ [A]: blob('A'), [B]: blob('B') });
    const got: string[] = [];
    const refused = new Error('receiver failed');
    const reading = blobsReader(repo)!([A, B], (oid) => {
      got.push(oid);
      throw refused;
    });
    await expect(reading).rejects.toBe(refused);
    expect(got).toEqual([A]);
    expect(repo.oneByOne).toEqual([]);
  });
});
