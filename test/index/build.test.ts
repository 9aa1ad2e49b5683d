import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import {
  type GitError,
  openLocalRepository,
  readBlob,
  walkCommit,
  type TreeCache,
} from '../../src/git/index.ts';
import {
  forgetBodies,
  indexCommit,
  indexStore,
  keepServed,
  newIndexCache,
  packFiles,
  releaseFacts,
  seedFacts,
  type CommitIndex,
  type IndexCache,
} from '../../src/index/index.ts';
import { MAX_LISTED_BYTES, MAX_SKILL_BYTES } from '../../src/skills/index.ts';
import { fixture, fixtureFile } from '../helpers/fixtures.ts';
import { tempDir } from '../helpers/temp.ts';

const catalog = fixture('catalog');

/** The oracle: the bytes fixtures-repos/catalog/c2 holds for a file, hashed with node:crypto. */
function declared(file: string): { size: number; digest: string } {
  const bytes = fixtureFile('catalog', 'c2', file);
  return { size: bytes.byteLength, digest: `sha256:${createHash('sha256').update(bytes).digest('hex')}` };
}

async function index(commit: string, cache?: IndexCache & { trees?: TreeCache }, reads?: string[]) {
  const repo = await openLocalRepository(catalog.gitdir);
  const tree = await walkCommit(repo, commit, cache?.trees);
  if (cache) cache.trees = tree.trees;
  return indexCommit({
    ...tree,
    paths: ['skills'],
    ...(cache ? { cache } : {}),
    readBlob: (id) => {
      reads?.push(id);
      return readBlob(repo, id);
    },
  });
}

describe('indexCommit', () => {
  it('gives every file the size and sha256 of the bytes the fixture declares for it', async () => {
    const c2 = catalog.commits['c2']!;
    const result = await index(c2);
    expect(result.commit).toBe(c2);
    expect(result.commitTime).toBe('2024-03-08T16:30:00.000Z');
    let files = 0;
    for (const skill of result.skills) {
      for (const file of skill.files) {
        expect({ size: file.size, digest: file.digest }).toEqual(declared(file.path));
        files++;
      }
    }
    expect(files).toBe(15);
    expect(result.skills.map((s) => s.servedDir)).toEqual([
      'skills/changelog-writer',
      'skills/data-pipeline',
      'skills/data-pipeline/stages/validate-rows',
      'skills/git-commit-style',
      'skills/pdf-forms',
      'skills/release-notes',
      'skills/vercel-composition-patterns',
    ]);
    expect(result.problems.map((p) => [p.path, p.reason])).toEqual([
      ['skills/Bad_Name/SKILL.md', 'name-invalid'],
      ['skills/composition-patterns/SKILL.md', 'name-mismatch'],
      ['skills/no-description/SKILL.md', 'description-missing'],
      ['skills/no-frontmatter/SKILL.md', 'frontmatter-missing'],
    ]);
  });

  it('re-indexing another commit reads and hashes only blobs it has not seen, and reuses unchanged trees', async () => {
    const cache: IndexCache & { trees?: TreeCache } = newIndexCache();
    const first = await index(catalog.commits['c1']!, cache);
    const before = cache.blobs.size;
    const reads: string[] = [];
    const second = await index(catalog.commits['c2']!, cache, reads);
    // c2 changes pdf-forms/SKILL.md and references/FORMS.md and adds changelog-writer/SKILL.md: exactly those are read.
    expect(cache.blobs.size - before).toBe(3);
    expect(reads.length).toBe(3);
    const unchanged = (s: { servedDir: string }) => s.servedDir !== 'skills/pdf-forms';
    expect(second.skills.filter(unchanged).filter((s) => s.servedDir !== 'skills/changelog-writer')).toEqual(
      first.skills.filter(unchanged),
    );
  });

  it('keeps in the cache only what the last index serves, and re-indexes from it as from a full one', async () => {
    const cache: IndexCache & { trees?: TreeCache } = newIndexCache();
    const first = await index(catalog.commits['c1']!, cache);
    const servedBy = (result: typeof first) =>
      new Set(result.skills.flatMap((skill) => skill.files.map((file) => file.blob)));
    expect(cache.blobs.size).toBeGreaterThan(servedBy(first).size);
    keepServed(cache, first);
    expect(new Set(cache.blobs.keys())).toEqual(servedBy(first));
    expect([...cache.skillMd.keys()].every((id) => servedBy(first).has(id))).toBe(true);
    expect(cache.skillMd.size).toBe(first.skills.length);
    expect(await index(catalog.commits['c2']!, cache)).toEqual(await index(catalog.commits['c2']!));
  });

  it('lets go of the facts of an index it holds packed, and reads again only the blobs the next commit adds', async () => {
    const cache: IndexCache & { trees?: TreeCache } = newIndexCache();
    const first = await index(catalog.commits['c1']!, cache);
    keepServed(cache, first);
    const held = packFiles(JSON.parse(JSON.stringify(first)) as CommitIndex);
    releaseFacts(cache);
    // No LFS pointer in c1: no fact is left.
    expect(cache.blobs.size).toBe(0);
    seedFacts(cache, held);
    // Every blob the index serves, once (a nested skill's files are listed by the skill around it too).
    const facts = new Map(
      first.skills.flatMap((skill) =>
        skill.files.map((f) => [f.blob, { size: f.size, digest: f.digest }] as const),
      ),
    );
    expect(facts.size).toBe(12);
    expect([...cache.blobs.entries()].sort()).toEqual([...facts.entries()].sort());
    const reads: string[] = [];
    const second = await index(catalog.commits['c2']!, cache, reads);
    // It reads what a cache that kept the facts of what c1 serves reads: the 3 blobs c2 changes or adds, and the 3 of
    // what c1 did not serve.
    const kept: IndexCache & { trees?: TreeCache } = newIndexCache();
    keepServed(kept, await index(catalog.commits['c1']!, kept));
    const keptReads: string[] = [];
    await index(catalog.commits['c2']!, kept, keptReads);
    expect([reads.length, reads.sort()]).toEqual([6, keptReads.sort()]);
    expect(second).toEqual(await index(catalog.commits['c2']!));
    // An LFS pointer's facts stay: an index does not say which blobs are pointers.
    cache.blobs.set('f'.repeat(40), { size: 130, digest: `sha256:${'0'.repeat(64)}`, lfs: true });
    releaseFacts(cache);
    expect([...cache.blobs.keys()]).toEqual(['f'.repeat(40)]);
  });

  it('gives the same index with and without the caches', async () => {
    const cache: IndexCache & { trees?: TreeCache } = newIndexCache();
    await index(catalog.commits['c1']!, cache);
    expect(await index(catalog.commits['c2']!, cache)).toEqual(await index(catalog.commits['c2']!));
  });
});

describe('indexCommit with sizes from the listing', () => {
  const skillMd = (name: string) => Buffer.from(`---\nname: ${name}\ndescription: A skill.\n---\nBody\n`);
  const blobs = new Map([
    ['a'.repeat(40), skillMd('small')],
    ['b'.repeat(40), skillMd('heavy')],
    ['c'.repeat(40), Buffer.from('ten bytes\n')],
  ]);
  const entry = (path: string, id: string, size?: number) => ({
    path,
    type: 'file' as const,
    id,
    ...(size === undefined ? {} : { size }),
  });

  it(`asks blobSizes only for blobs without one, and never reads a file of a skill over ${MAX_SKILL_BYTES} bytes`, async () => {
    const reads: string[] = [];
    const asked: string[][] = [];
    const result = await indexCommit({
      commit: '1'.repeat(40),
      commitTime: '2024-01-01T00:00:00.000Z',
      tree: '2'.repeat(40),
      entries: [
        entry('heavy/SKILL.md', 'b'.repeat(40), blobs.get('b'.repeat(40))!.byteLength),
        // A listing's size is taken as the header's: this one says the blob is over the skill limit.
        entry('heavy/data.bin', 'd'.repeat(40), MAX_SKILL_BYTES),
        entry('small/SKILL.md', 'a'.repeat(40)),
        entry('small/notes.txt', 'c'.repeat(40), 10),
      ],
      readBlob: async (id) => {
        reads.push(id);
        const bytes = blobs.get(id);
        if (bytes === undefined) throw new Error(`blob ${id} must not be read`);
        return bytes;
      },
      blobSizes: async (ids) => {
        asked.push([...ids]);
        return ids.map((id) => blobs.get(id)?.byteLength);
      },
    });
    expect(asked).toEqual([['a'.repeat(40)]]);
    expect(reads.sort()).toEqual(['a'.repeat(40), 'b'.repeat(40), 'c'.repeat(40)]);
    expect(
      result.skills.map((skill) => [skill.name, skill.files.map((file) => [file.relPath, file.size])]),
    ).toEqual([
      [
        'small',
        [
          ['SKILL.md', blobs.get('a'.repeat(40))!.byteLength],
          ['notes.txt', 10],
        ],
      ],
    ]);
    expect(result.problems.map((p) => [p.path, p.reason])).toEqual([['heavy', 'too-large']]);
  });
});

describe('indexCommit of a tree whose skills list too much', () => {
  it(`is source-too-large past ${MAX_LISTED_BYTES} listed bytes, before any blob is read`, async () => {
    const entries = Array.from({ length: 4_000 }, (_, i) => ({
      path: `${'d/'.repeat(i)}SKILL.md`,
      type: 'file' as const,
      id: 'a'.repeat(40),
    })).sort((a, b) => (a.path < b.path ? -1 : 1));
    const commit = '1'.repeat(40);
    const error = (await indexCommit({
      commit,
      commitTime: '2024-01-01T00:00:00.000Z',
      tree: '2'.repeat(40),
      entries,
      readBlob: () => Promise.reject(new Error('no blob is read')),
    }).catch((e: unknown) => e)) as GitError;
    expect([error.code, error.message]).toEqual([
      'source-too-large',
      `the skills of commit ${commit} list more than ${MAX_LISTED_BYTES} bytes of files (nested skills list theirs again)`,
    ]);
  });
});

describe('the index cache', () => {
  it('keeps no SKILL.md text once the bodies are forgotten: frontmatter values are not slices of it', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    // 200 SKILL.md files of 64 KiB, each with a description of its own: one kept as a slice of its text would
    // keep the text (12.5 MiB in all).
    const texts = new Map<string, Uint8Array>();
    const entries = Array.from({ length: 200 }, (_, i) => {
      const description = `Skill number ${i} ${'and its long description '.repeat(20)}end ${i}`;
      const text = `---\nname: s${i}\ndescription: ${description}\n---\n${'filler words\n'.repeat(5000)}`;
      const id = createHash('sha1').update(text).digest('hex');
      texts.set(id, Buffer.from(text));
      return { path: `skills/s${String(i).padStart(3, '0')}/SKILL.md`, type: 'file' as const, id };
    });
    const cache = newIndexCache();
    gc();
    const before = process.memoryUsage().heapUsed;
    const built = await indexCommit({
      commit: '1'.repeat(40),
      commitTime: '2024-01-01T00:00:00.000Z',
      tree: '2'.repeat(40),
      entries,
      paths: ['skills'],
      cache,
      readBlob: async (id) => texts.get(id)!,
    });
    texts.clear();
    expect([built.skills.length, cache.skillMd.size, cache.bodies.size]).toEqual([200, 200, 200]);
    gc();
    // The bodies held for the commit's search data: 12.5 MiB.
    expect((process.memoryUsage().heapUsed - before) / 2 ** 20).toBeGreaterThan(12);
    forgetBodies(cache, built);
    gc();
    expect(cache.bodies.size).toBe(0);
    expect((process.memoryUsage().heapUsed - before) / 2 ** 20).toBeLessThan(2);
    expect(built.skills.find((skill) => skill.name === 's7')!.frontmatter['description']).toBe(
      `Skill number 7 ${'and its long description '.repeat(20)}end 7`,
    );
  });
});

describe('indexStore', () => {
  const options = { paths: ['skills'], strictNames: false };

  it('round-trips an index and refuses a corrupt, foreign or differently configured one', async () => {
    const dir = tempDir('skillpin-index-');
    const store = indexStore(dir);
    const built = await index(catalog.commits['c1']!);
    await store.save(built, options);
    expect(await store.load(built.commit, options)).toEqual(built);
    expect(await store.load(built.commit, { paths: [], strictNames: false })).toBeUndefined();
    writeFileSync(
      path.join(dir, `${built.commit}.json`),
      '{"options": {"paths": ["skills"], "strictNames": false}, "index": {"version": 1, "comm',
    );
    expect(await store.load(built.commit, options)).toBeUndefined();
  });
});
