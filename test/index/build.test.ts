import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openLocalRepository, readBlob, walkCommit } from '../../src/git/index.ts';
import { indexCommit, indexStore, type BlobFacts } from '../../src/index/index.ts';
import { fixture } from '../helpers/fixtures.ts';

const catalog = fixture('catalog');

/** The oracle: git's own bytes for `<commit>:<path>`, hashed here. */
function gitDigest(gitdir: string, commit: string, file: string): { size: number; digest: string } {
  const bytes = execFileSync('git', ['--git-dir', gitdir, 'cat-file', 'blob', `${commit}:${file}`]);
  return { size: bytes.byteLength, digest: `sha256:${createHash('sha256').update(bytes).digest('hex')}` };
}

async function index(commit: string, cache?: Map<string, BlobFacts>, reads?: string[]) {
  const repo = await openLocalRepository(catalog.gitdir);
  const tree = await walkCommit(repo, commit);
  return indexCommit({ ...tree, paths: ['skills'], ...(cache ? { cache } : {}), readBlob: (id) => (reads?.push(id), readBlob(repo, id)) });
}

describe('indexCommit', () => {
  it('gives every file the size and sha256 of the bytes git holds for it', async () => {
    const c2 = catalog.commits['c2']!;
    const result = await index(c2);
    expect(result.commit).toBe(c2);
    expect(result.commitTime).toBe('2024-03-08T16:30:00.000Z');
    let files = 0;
    for (const skill of result.skills) {
      for (const file of skill.files) {
        expect({ size: file.size, digest: file.digest }).toEqual(gitDigest(catalog.gitdir, c2, file.path));
        files++;
      }
    }
    expect(files).toBe(15);
    expect(result.skills.map((s) => s.servedDir)).toEqual([
      'skills/changelog-writer', 'skills/data-pipeline', 'skills/data-pipeline/stages/validate-rows', 'skills/git-commit-style',
      'skills/pdf-forms', 'skills/release-notes', 'skills/vercel-composition-patterns',
    ]);
    expect(result.problems.map((p) => [p.path, p.reason])).toEqual([
      ['skills/Bad_Name/SKILL.md', 'name-invalid'],
      ['skills/composition-patterns/SKILL.md', 'name-mismatch'],
      ['skills/no-description/SKILL.md', 'description-missing'],
      ['skills/no-frontmatter/SKILL.md', 'frontmatter-missing'],
    ]);
  });

  it('re-indexing another commit hashes only blobs it has not seen', async () => {
    const cache = new Map<string, BlobFacts>();
    await index(catalog.commits['c1']!, cache);
    const before = cache.size;
    const reads: string[] = [];
    await index(catalog.commits['c2']!, cache, reads);
    // c2 changes pdf-forms/SKILL.md and references/FORMS.md and adds changelog-writer/SKILL.md.
    expect(cache.size - before).toBe(3);
    const skillMdReads = 10; // every SKILL.md (7 served, 3 refused) is read again to parse its frontmatter
    expect(reads.length).toBe(skillMdReads + 1);
  });
});

describe('indexStore', () => {
  const options = { paths: ['skills'], strictNames: false };

  it('round-trips an index and refuses a corrupt, foreign or differently configured one', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'skillpin-index-'));
    const store = indexStore(dir);
    const built = await index(catalog.commits['c1']!);
    await store.save(built, options);
    expect(await store.load(built.commit, options)).toEqual(built);
    expect(await store.load(built.commit, { paths: [], strictNames: false })).toBeUndefined();
    writeFileSync(path.join(dir, `${built.commit}.json`), '{"options": {"paths": ["skills"], "strictNames": false}, "index": {"version": 1, "comm');
    expect(await store.load(built.commit, options)).toBeUndefined();
  });
});
