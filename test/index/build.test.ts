import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openLocalRepository, readBlob, walkCommit, type TreeCache } from '../../src/git/index.ts';
import { indexCommit, indexStore, newIndexCache, type IndexCache } from '../../src/index/index.ts';
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

  it('gives the same index with and without the caches', async () => {
    const cache: IndexCache & { trees?: TreeCache } = newIndexCache();
    await index(catalog.commits['c1']!, cache);
    expect(await index(catalog.commits['c2']!, cache)).toEqual(await index(catalog.commits['c2']!));
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
