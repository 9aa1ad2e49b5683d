import type { Namespace } from '../../src/catalog/index.ts';
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/temp.ts';
import type { SourceConfig } from '../../src/config/index.ts';
import { CACHE_USES, GitError } from '../../src/git/index.ts';
import { openSource } from '../../src/sync/source.ts';
import { damageOf } from '../../src/sync/damage.ts';
import { heldCommits } from '../../src/sync/held.ts';
import { fixture } from '../helpers/fixtures.ts';

/** A served file by its path in the repository. */
const fileOf = (ns: Namespace, path: string) =>
  ns.skills.flatMap((skill) => skill.files).find((file) => file.path === path)!;

const catalog = fixture('catalog');
const c1 = catalog.commits['c1']!;
const c2 = catalog.commits['c2']!;

const local = (gitdir: string, commit = c2): SourceConfig => ({
  id: 'cat',
  location: { kind: 'local', path: gitdir },
  target: { kind: 'commit', commit },
  paths: ['skills'],
  strictNames: false,
  keep: 2,
  timeoutMs: 5000,
});
const dirs: string[] = [];
const temp = (prefix: string) => {
  const dir = tempDir(prefix);
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
const copyOfCatalog = () => {
  const copy = path.join(temp('skillpin-copy-'), 'catalog.git');
  cpSync(catalog.gitdir, copy, { recursive: true });
  return copy;
};

describe('a source', () => {
  it('resolves its pin, persists the index of a commit and serves it again without reading the repository', async () => {
    const copy = copyOfCatalog();
    const dataDir = temp('skillpin-data-');
    const source = openSource(local(copy), { dataDir });
    expect(await source.resolve()).toEqual({ commit: c2 });
    const first = await source.load({ commit: c2 });
    expect(existsSync(path.join(dataDir, 'index', 'cat', `${c2}.json`))).toBe(true);
    // Remove every object: the index must come from dataDir alone (blob reads would fail, listing must not).
    for (const dir of readdirSync(path.join(copy, 'objects')))
      if (/^[0-9a-f]{2}$/.test(dir)) rmSync(path.join(copy, 'objects', dir), { recursive: true });
    const again = await openSource(local(copy), { dataDir }).restore(c2);
    expect([again.commitTime, again.skills, again.problems]).toEqual([
      first.commitTime,
      first.skills,
      first.problems,
    ]);
  });

  it('hands on the SKILL.md text it read while indexing (the search index reads none again); a restored commit has none', async () => {
    const dataDir = temp('skillpin-data-');
    const ns = await openSource(local(catalog.gitdir), { dataDir }).load({ commit: c2 });
    const skillMd = fileOf(ns, 'skills/pdf-forms/SKILL.md');
    const text = Buffer.from(await ns.readBlob(skillMd.blob)).toString('utf8');
    // What follows the frontmatter's closing line, its line break left out.
    const body = text.slice(text.indexOf('\n---\n') + '\n---\n'.length);
    expect([body.startsWith('\n# PDF forms\n'), ns.skillMdBody?.(skillMd.blob)]).toEqual([true, body]);
    // Not a SKILL.md: nothing to hand on.
    expect(ns.skillMdBody?.(fileOf(ns, 'skills/pdf-forms/references/FORMS.md').blob)).toBeUndefined();
    // A new process restores the commit from its index file: it read no SKILL.md, the search index reads them.
    const restored = await openSource(local(catalog.gitdir), { dataDir }).restore(c2);
    expect(restored.skillMdBody?.(skillMd.blob)).toBeUndefined();
  });

  it('reports a commit from its index file alone, and names what dataDir holds; forget removes it', async () => {
    const dataDir = temp('skillpin-data-');
    const source = openSource(local(catalog.gitdir), { dataDir });
    expect(await source.held()).toEqual([]);
    expect(await source.status(c2)).toEqual({ commit: c2 });
    const ns = await source.load({ commit: c2 });
    await source.load({ commit: c1 });
    expect((await source.held()).sort()).toEqual([c1, c2].sort());
    expect(await source.status(c2)).toEqual({
      commit: c2,
      commitTime: ns.commitTime,
      skills: ns.skills.length,
      problems: ns.problems,
    });
    await source.forget(c1);
    expect(await source.held()).toEqual([c2]);
  });

  it('keeps serving a local repository after another program repacks it (git gc)', async () => {
    const copy = copyOfCatalog();
    execFileSync('git', ['--git-dir', copy, 'repack', '-a', '-d', '-q']);
    const ns = await openSource(local(copy), { dataDir: temp('skillpin-data-') }).load({ commit: c2 });
    const file = fileOf(ns, 'skills/pdf-forms/references/FORMS.md');
    expect((await ns.readBlob(file.blob)).byteLength).toBe(file.size);
    // Repack again: the pack the namespace knew is deleted and a new one written. Enough reads follow for
    // isomorphic-git's cache (which still holds the old pack in memory) to be replaced.
    execFileSync('git', ['--git-dir', copy, '-c', 'pack.compression=1', 'repack', '-a', '-d', '-f', '-q']);
    for (let i = 0; i <= CACHE_USES; i++) await ns.readBlob(file.blob);
    const again = fileOf(ns, 'skills/pdf-forms/SKILL.md');
    expect((await ns.readBlob(again.blob)).byteLength).toBe(again.size);
    expect((await ns.readBlob(file.blob)).byteLength).toBe(file.size);
  });

  it('reports a blob missing from the store as source-incomplete', async () => {
    const copy = copyOfCatalog();
    const blob = execFileSync(
      'git',
      ['--git-dir', copy, 'rev-parse', `${c2}:skills/pdf-forms/references/FORMS.md`],
      { encoding: 'utf8' },
    ).trim();
    rmSync(path.join(copy, 'objects', blob.slice(0, 2), blob.slice(2)));
    const error = await openSource(local(copy), { dataDir: temp('skillpin-data-') })
      .load({ commit: c2 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GitError);
    expect((error as GitError).code).toBe('source-incomplete');
  });
});

describe('sources serving one commit', () => {
  it('read or build its search index once and hold one copy; other index options get their own', async () => {
    const dataDir = temp('skillpin-data-');
    const held = heldCommits();
    const open = (id: string, paths = ['skills']) =>
      openSource({ ...local(catalog.gitdir), id, paths }, { dataDir, held }).load({ commit: c2 });
    const [one, two, wider] = [await open('one'), await open('two'), await open('wider', [])];
    const [first, second, other] = await Promise.all([one, two, wider].map((ns) => ns.searchData!()));
    expect(first).toBe(second);
    expect(other).not.toBe(first);
    expect([first!.postings.skillCount, other!.postings.skillCount]).toEqual([
      one.skills.length,
      wider.skills.length,
    ]);
    // Without a shared HeldSearches (as before), each source holds its own.
    const alone = await openSource({ ...local(catalog.gitdir), id: 'alone' }, { dataDir }).load({
      commit: c2,
    });
    expect(await alone.searchData!()).not.toBe(first);
  });

  it('lets go of an index one of them finds wrong: rebuilt once, and what later asks gets the rebuilt one', async () => {
    const dataDir = temp('skillpin-data-');
    const held = heldCommits();
    const open = (id: string) => openSource({ ...local(catalog.gitdir), id }, { dataDir, held });
    const [one, two] = [open('one'), open('two')];
    const before = await one.load({ commit: c2 });
    expect((await two.load({ commit: c2 })).skills).toBe(before.skills);
    const repaired = await two.repair(damageOf(c2, 'index'));
    expect(repaired.skills).not.toBe(before.skills);
    expect(repaired.skills).toEqual(before.skills);
    expect((await open('three').load({ commit: c2 })).skills).toBe(repaired.skills);
    // `one` keeps its file: the rebuilt one replaced `two`'s name only.
    expect(existsSync(path.join(dataDir, 'index', 'one', `${c2}.json`))).toBe(true);
  });
});
