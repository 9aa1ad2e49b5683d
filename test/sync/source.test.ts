import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { SourceConfig } from '../../src/config/index.ts';
import { CACHE_USES, GitError } from '../../src/git/index.ts';
import { indexDir, loadSource } from '../../src/sync/source.ts';
import { fixture } from '../helpers/fixtures.ts';

const catalog = fixture('catalog');
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
const context = () => ({ dataDir: mkdtempSync(path.join(tmpdir(), 'skillpin-data-')), caches: new Map() });

describe('loadSource', () => {
  it('persists the index of a commit and serves it again without reading the repository', async () => {
    const copy = path.join(mkdtempSync(path.join(tmpdir(), 'skillpin-copy-')), 'catalog.git');
    cpSync(catalog.gitdir, copy, { recursive: true });
    const ctx = context();
    const first = await loadSource(local(copy), ctx);
    expect(existsSync(path.join(indexDir(ctx.dataDir, 'cat'), `${c2}.json`))).toBe(true);
    // Remove every object: the index must come from dataDir alone (blob reads would fail, listing must not).
    for (const dir of readdirSync(path.join(copy, 'objects')))
      if (/^[0-9a-f]{2}$/.test(dir)) rmSync(path.join(copy, 'objects', dir), { recursive: true });
    const again = await loadSource(local(copy), { ...ctx, caches: new Map() });
    expect([again.commitTime, again.skills, again.problems]).toEqual([
      first.commitTime,
      first.skills,
      first.problems,
    ]);
  });

  it('keeps serving a local repository after another program repacks it (git gc)', async () => {
    const copy = path.join(mkdtempSync(path.join(tmpdir(), 'skillpin-copy-')), 'catalog.git');
    cpSync(catalog.gitdir, copy, { recursive: true });
    execFileSync('git', ['--git-dir', copy, 'repack', '-a', '-d', '-q']);
    const ns = await loadSource(local(copy), context());
    const pdfForms = ns.skills.find((skill) => skill.dir === 'skills/pdf-forms')!;
    const file = pdfForms.files.find((f) => f.relPath === 'references/FORMS.md')!;
    expect((await ns.readBlob(file.blob)).byteLength).toBe(file.size);
    // Repack again: the pack the namespace knew is deleted and a new one written. Enough reads follow for
    // isomorphic-git's cache (which still holds the old pack in memory) to be replaced.
    execFileSync('git', ['--git-dir', copy, '-c', 'pack.compression=1', 'repack', '-a', '-d', '-f', '-q']);
    for (let i = 0; i <= CACHE_USES; i++) await ns.readBlob(file.blob);
    const again = pdfForms.files.find((f) => f.relPath === 'SKILL.md')!;
    expect((await ns.readBlob(again.blob)).byteLength).toBe(again.size);
    expect((await ns.readBlob(file.blob)).byteLength).toBe(file.size);
  });

  it('reports a blob missing from the store as source-incomplete', async () => {
    const copy = path.join(mkdtempSync(path.join(tmpdir(), 'skillpin-copy-')), 'catalog.git');
    cpSync(catalog.gitdir, copy, { recursive: true });
    const blob = execFileSync(
      'git',
      ['--git-dir', copy, 'rev-parse', `${c2}:skills/pdf-forms/references/FORMS.md`],
      { encoding: 'utf8' },
    ).trim();
    rmSync(path.join(copy, 'objects', blob.slice(0, 2), blob.slice(2)));
    const error = await loadSource(local(copy), context()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GitError);
    expect((error as GitError).code).toBe('source-incomplete');
  });
});
