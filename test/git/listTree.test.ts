import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { listingParser } from '../../src/git/cli/lsTree.ts';
import {
  fetchCommit,
  type GitError,
  openLocalRepository,
  openStore,
  walkCommit,
} from '../../src/git/index.ts';
import { MAX_OBJECT_BYTES, MAX_TREE_ENTRIES, MAX_TREE_LISTING_BYTES } from '../../src/git/limits.ts';
import type { Repository } from '../../src/git/repository.ts';
import { listCommit, readCommit } from '../../src/git/tree.ts';
import { BACKENDS, withoutSizes } from '../helpers/backends.ts';
import { fixtures } from '../helpers/fixtures.ts';
import { gitEnv } from '../helpers/git.ts';
import { tempDir } from '../helpers/temp.ts';

const open = (gitdir: string, backend: 'cli' | 'isomorphic') => openLocalRepository(gitdir, { backend });

/** The same repository without its bulk listing: the walk reads tree after tree. */
const treeByTree = (repo: Repository): Repository => {
  const { listTree: _, ...rest } = repo;
  return Object.assign(Object.create(Object.getPrototypeOf(repo) as object) as Repository, rest);
};

const all = Object.values(fixtures()).flatMap((fx) =>
  Object.entries(fx.commits).map(([id, commit]) => ({ name: `${fx.name} ${id}`, gitdir: fx.gitdir, commit })),
);

describe('the cli backend lists a whole tree with one git ls-tree', () => {
  it(`a fetched commit whose tree passes ${MAX_TREE_ENTRIES} entries is source-too-large, not a missing commit`, async () => {
    const { gitdir, commit } = pastMaxEntries();
    const store = await openStore(path.join(tempDir(), 'store.git'), { backend: 'cli' });
    const error = (await fetchCommit(store, { url: `file://${gitdir}` }, commit).catch(
      (e: unknown) => e,
    )) as GitError;
    expect(error.code).toBe('source-too-large');
    expect(error.message).toMatch(`more than ${MAX_TREE_ENTRIES} entries`);
    await store.close();
  });

  it('passes git only an object id: anything else is refused before git runs', async () => {
    const repo = await open(all[0]!.gitdir, 'cli');
    for (const bad of ['--output=/tmp/x', 'HEAD', `${'a'.repeat(40)} `])
      await expect(repo.listTree!(bad)).rejects.toThrow(`not an object id: ${JSON.stringify(bad)}`);
    await repo.close();
  });

  it('has a bulk listing; the isomorphic backend walks tree by tree', async () => {
    const gitdir = all[0]!.gitdir;
    const [cli, isomorphic] = await Promise.all([open(gitdir, 'cli'), open(gitdir, 'isomorphic')]);
    expect(cli.listTree).toBeTypeOf('function');
    expect(isomorphic.listTree).toBeUndefined();
    await Promise.all([cli.close(), isomorphic.close()]);
  });

  it.each(all)(
    '$name: the listing equals the walk of both backends (paths, modes, ids, order)',
    async ({ gitdir, commit }) => {
      const [cli, isomorphic] = await Promise.all([open(gitdir, 'cli'), open(gitdir, 'isomorphic')]);
      try {
        const listed = await cli.listTree!(commit);
        const walked = await listCommit(isomorphic, commit);
        expect(withoutSizes(listed)).toEqual(walked.entries);
        // Sizes as the objects' headers give them, for every blob (the fixtures hold all of theirs).
        const blobs = listed.filter((entry) => entry.type !== 'submodule');
        expect(blobs.map((entry) => entry.size)).toEqual(
          await isomorphic.objectSizes(blobs.map((entry) => entry.id)),
        );
        expect(blobs.every((entry) => typeof entry.size === 'number')).toBe(true);
        expect((await listCommit(treeByTree(cli), commit)).entries).toEqual(walked.entries);
        // The whole walk (symlink targets read) too.
        expect(withoutSizes((await walkCommit(cli, commit)).entries)).toEqual(
          (await walkCommit(isomorphic, commit)).entries,
        );
      } finally {
        await Promise.all([cli.close(), isomorphic.close()]);
      }
    },
  );

  it('gives the size of each blob held, and none for a blob the repository lacks', async () => {
    let held = '';
    const gone = '1'.repeat(40);
    const { gitdir, commit } = repoWith((mktree, blob) => {
      held = blob('four');
      return mktree([
        line('100644', 'blob', held, 'held'),
        line('100644', 'blob', gone, 'gone'),
        line('160000', 'commit', '2'.repeat(40), 'sub'),
      ]);
    });
    const repo = await open(gitdir, 'cli');
    const entries = await repo.listTree!(commit);
    expect(entries.map((entry) => [entry.path, entry.size])).toEqual([
      ['gone', undefined],
      ['held', 4],
      ['sub', undefined],
    ]);
    await repo.close();
  });

  it('parses records split anywhere across chunks', async () => {
    const adversarial = fixtures()['adversarial']!;
    const commit = Object.values(adversarial.commits).at(-1)!;
    const repo = await open(adversarial.gitdir, 'cli');
    const { tree } = await readCommit(repo, commit);
    const listing = (...more: string[]) =>
      execFileSync('git', ['--git-dir', adversarial.gitdir, 'ls-tree', '-r', '-t', ...more, '-z', tree], {
        env: gitEnv(),
        maxBuffer: 1 << 28,
      });
    for (const [size, output, withSizes] of [
      [1, listing(), false],
      [7, listing('-l'), true],
      [4096, listing(), false],
      [4096, listing('-l'), true],
    ] as const) {
      const parser = listingParser(tree);
      for (let at = 0; at < output.length; at += size)
        expect(parser.push(output.subarray(at, at + size))).toBe(true);
      expect(parser.truncated).toBe(false);
      const listed = await repo.listTree!(commit);
      expect(parser.entries).toEqual(withSizes ? listed : withoutSizes(listed));
    }
    await repo.close();
  });
});

/**
 * A bare repository whose commit's tree `build` makes with `git mktree` from `<mode> <type> <oid>\t<name>` lines. Its
 * objects stay loose, unless `packed`: then they go into one pack, as a fetch leaves them (git reads a loose object's
 * size by inflating it, once per entry: a million entries of one loose blob took git 34 s to list with sizes, 2 s
 * packed).
 */
function repoWith(
  build: (mktree: (lines: Buffer[]) => string, blob: (text: string | Buffer) => string) => string,
  { packed = false } = {},
) {
  const gitdir = path.join(tempDir('skillpin-lstree-'), 'repo.git');
  execFileSync('git', ['init', '--quiet', '--bare', gitdir], { env: gitEnv() });
  const run = (args: string[], input: string | Buffer) =>
    execFileSync('git', ['--git-dir', gitdir, ...args], { env: gitEnv(), input, maxBuffer: 1 << 28 })
      .toString()
      .trim();
  const mktree = (lines: Buffer[]) => run(['mktree', '-z', '--missing'], Buffer.concat(lines));
  const blob = (text: string | Buffer) => run(['hash-object', '-w', '--stdin'], text);
  const tree = build(mktree, blob);
  const commit = run(['commit-tree', tree, '-m', 'tree'], '');
  if (packed) {
    // Every object, whether or not the commit reaches it (a tree may name missing ones: mktree --missing).
    const objects = run(['cat-file', '--batch-all-objects', '--batch-check=%(objectname)'], '');
    run(['pack-objects', '-q', path.join(gitdir, 'objects', 'pack', 'pack')], `${objects}\n`);
    run(['prune-packed'], '');
  }
  return { gitdir, commit };
}

const line = (mode: string, type: string, oid: string, name: string | Buffer) =>
  Buffer.concat([Buffer.from(`${mode} ${type} ${oid}\t`), Buffer.from(name), Buffer.from([0])]);

let pastMax: { gitdir: string; commit: string } | undefined;
/** A commit whose tree holds MAX_TREE_ENTRIES + 1000 entries (1,001 copies of one subtree of 1,000), packed as a
 * fetch leaves it; built once for the file, only read. */
const pastMaxEntries = () =>
  (pastMax ??= repoWith(
    (mktree, blob) => {
      const b = blob('x\n');
      const thousand = mktree(Array.from({ length: 1000 }, (_, i) => line('100644', 'blob', b, `f${i}`)));
      const width = Math.floor(MAX_TREE_ENTRIES / 1000) + 1;
      return mktree(Array.from({ length: width }, (_, i) => line('040000', 'tree', thousand, `d${i}`)));
    },
    { packed: true },
  ));

describe.each(BACKENDS)('a hostile tree, $name backend', ({ name: backend }) => {
  it('names with any bytes (not UTF-8, a byte-order mark, tabs, newlines) list as the walk decodes them', async () => {
    const { gitdir, commit } = repoWith((mktree, blob) => {
      const b = blob('x\n');
      const link = blob('../target');
      const odd = [
        Buffer.from([0xef, 0xbb, 0xbf, 0x61]), // a byte-order mark, then "a"
        Buffer.from([0x62, 0xe2, 0x82]), // a cut sequence at the end
        Buffer.from([0xff, 0xfe, 0x63]),
        Buffer.from('tab\there'),
        Buffer.from('new\nline'),
        Buffer.from('sp ace'),
        Buffer.from('\\back"slash'),
      ];
      const inner = mktree([
        ...odd.map((n) => line('100644', 'blob', b, n)),
        line('100755', 'blob', b, 'run.sh'),
        line('120000', 'blob', link, 'link'),
        line('160000', 'commit', '1'.repeat(40), 'sub'),
      ]);
      return mktree([
        ...odd.map((n) => line('040000', 'tree', inner, n)),
        line('100644', 'blob', b, Buffer.from([0xef, 0xbb, 0xbf])),
      ]);
    });
    const repo = await open(gitdir, backend);
    const other = await open(gitdir, backend === 'cli' ? 'isomorphic' : 'cli');
    const walked = await walkCommit(repo, commit);
    expect(walked.entries).toHaveLength(7 * 10 + 1);
    expect(walked.entries.map((entry) => entry.path)).toContain('a/\uFFFD\uFFFDc');
    expect(walked.entries.map((entry) => entry.path)).toContain('b\uFFFD/a');
    expect(walked.entries.find((entry) => entry.path === 'a/link')).toMatchObject({
      type: 'symlink',
      target: '../target',
    });
    expect(withoutSizes(walked.entries)).toEqual(withoutSizes((await walkCommit(other, commit)).entries));
    await Promise.all([repo.close(), other.close()]);
  });

  it(`refuses a tree of repeated subtrees past ${MAX_TREE_ENTRIES} entries (source-too-large)`, async () => {
    const { gitdir, commit } = pastMaxEntries();
    const repo = await open(gitdir, backend);
    const error = (await walkCommit(repo, commit).catch((e: unknown) => e)) as GitError;
    expect(error.code).toBe('source-too-large');
    expect(error.message).toMatch(`more than ${MAX_TREE_ENTRIES} entries`);
    await repo.close();
    // A million entries listed and parsed: 3-7 s on two cores (packed), more under load.
  }, 180_000);

  it('an id that is not a commit of the repository is source-commit-not-found, though its listing ran', async () => {
    const { gitdir, commit } = repoWith((mktree, blob) =>
      mktree([line('100644', 'blob', blob('x\n'), 'file')]),
    );
    const repo = await open(gitdir, backend);
    const { tree } = await readCommit(repo, commit);
    for (const id of ['f'.repeat(40), tree]) {
      const error = (await walkCommit(repo, id).catch((e: unknown) => e)) as GitError;
      expect([error.code, error.message]).toEqual([
        'source-commit-not-found',
        `commit ${id} is not in the repository`,
      ]);
    }
    await repo.close();
  });

  it(`a root tree object over ${MAX_OBJECT_BYTES} bytes is source-too-large, as reading it would be`, async () => {
    let root = '';
    const { gitdir, commit } = repoWith((mktree, blob) => {
      const b = blob('x\n');
      const long = 'n'.repeat(4200);
      root = mktree(Array.from({ length: 16_000 }, (_, i) => line('100644', 'blob', b, `${long}${i}`)));
      return root;
    });
    const repo = await open(gitdir, backend);
    const error = (await walkCommit(repo, commit).catch((e: unknown) => e)) as GitError;
    expect(error.code).toBe('source-too-large');
    expect(error.message).toMatch(
      new RegExp(`^object ${root} inflates to \\d+ bytes, more than the ${MAX_OBJECT_BYTES} one object may$`),
    );
    await repo.close();
  });

  it(`refuses a tree whose paths pass ${MAX_TREE_LISTING_BYTES} bytes (source-too-large) before it lists them`, async () => {
    const { gitdir, commit } = repoWith(
      (mktree, blob) => {
        const b = blob('x\n');
        const long = 'n'.repeat(1000);
        const thousand = mktree(
          Array.from({ length: 1000 }, (_, i) => line('100644', 'blob', b, `${long}${i}`)),
        );
        const copies = Math.ceil(MAX_TREE_LISTING_BYTES / 1000 / 1000) + 1;
        return mktree(Array.from({ length: copies }, (_, i) => line('040000', 'tree', thousand, `d${i}`)));
      },
      { packed: true },
    );
    const repo = await open(gitdir, backend);
    const error = (await walkCommit(repo, commit).catch((e: unknown) => e)) as GitError;
    expect(error.code).toBe('source-too-large');
    expect(error.message).toMatch(
      backend === 'cli'
        ? `the listing of the tree of commit ${commit} passed ${MAX_TREE_LISTING_BYTES} bytes`
        : `pass ${MAX_TREE_LISTING_BYTES} characters`,
    );
    await repo.close();
  });

  it('a missing subtree is source-incomplete', async () => {
    let inner = '';
    const { gitdir, commit } = repoWith((mktree, blob) => {
      inner = mktree([line('100644', 'blob', blob('x\n'), 'file')]);
      return mktree([line('040000', 'tree', inner, 'dir')]);
    });
    rmSync(path.join(gitdir, 'objects', inner.slice(0, 2), inner.slice(2)));
    const repo = await open(gitdir, backend);
    const error = (await walkCommit(repo, commit).catch((e: unknown) => e)) as GitError;
    expect(error.code).toBe('source-incomplete');
    expect(error.message).toMatch(`of commit ${commit} is missing or unreadable`);
    await repo.close();
  });
});
