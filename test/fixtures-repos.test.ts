import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildFixtures, gitEnv } from '../fixtures-repos/build.ts';
import { tempDir } from './helpers/temp.ts';

/** The id git gives a blob of these bytes: an oracle apart from git. */
const blobId = (content: string | Buffer) => {
  const bytes = Buffer.from(content);
  return createHash('sha1').update(`blob ${bytes.length}\0`).update(bytes).digest('hex');
};

/** A fixtures root holding one repository `odd` whose repo.yaml is `yaml` and whose tree c1 holds README.md. */
function rootWith(yaml: string): string {
  const root = tempDir('skillpin-fixtures-');
  mkdirSync(path.join(root, 'odd', 'c1'), { recursive: true });
  writeFileSync(path.join(root, 'odd', 'c1', 'README.md'), 'plain\n');
  writeFileSync(path.join(root, 'odd', 'repo.yaml'), yaml);
  return root;
}

const commitWith = (entries: string) => `head: refs/heads/main
commits:
  - id: c1
    tree: c1
    date: "2024-01-01T00:00:00Z"
    message: odd names
${entries}
refs:
  refs/heads/main: c1
`;

describe('fixtures-repos/build.ts', () => {
  it('writes raw names a folder cannot hold: ".", "..", ".git" as a file and a folder, bytes not UTF-8', async () => {
    const root = rootWith(
      commitWith(`    raw:
      - { path: "s/a/.", content: "dot\\n" }
      - { path: "s/a/..", content: "dot dot\\n" }
      - { path: "s/a/.git", content: "gitdir: elsewhere\\n" }
      - { path: "s/b/.git/config", content: "[core]\\n" }
      - { path: "s/b/%FF%01.md", contentBase64: /w== }`),
    );
    const { odd } = await buildFixtures(tempDir(), root);
    const listed = execFileSync(
      'git',
      ['--git-dir', odd!.gitdir, 'ls-tree', '-r', '-z', odd!.commits['c1']!],
      {
        env: gitEnv(),
      },
    );
    // "<mode> blob <id>\t<path bytes>", the path shown one char per byte
    const entries = listed
      .toString('latin1')
      .split('\0')
      .filter((line) => line !== '')
      .map((line) => [line.slice(0, 6), line.slice(12, 52), line.slice(53)]);
    expect(entries).toEqual([
      ['100644', blobId('plain\n'), 'README.md'],
      ['100644', blobId('dot\n'), 's/a/.'],
      ['100644', blobId('dot dot\n'), 's/a/..'],
      ['100644', blobId('gitdir: elsewhere\n'), 's/a/.git'],
      ['100644', blobId('[core]\n'), 's/b/.git/config'],
      ['100644', blobId(Buffer.from([0xff])), 's/b/\xff\x01.md'],
    ]);
  });
});

describe('repo.yaml', () => {
  it('is refused with an unknown key, naming where it is', async () => {
    const root = rootWith(commitWith('    executables: [README.md]'));
    await expect(buildFixtures(tempDir(), root)).rejects.toThrow(
      'odd/repo.yaml is invalid:\n✖ Unrecognized key: "executables"\n  → at commits[0]',
    );
  });

  it('is refused when two entries claim one path, or an entry is also a folder', async () => {
    const twice = rootWith(commitWith('    raw: [{ path: README.md, content: "again" }]'));
    await expect(buildFixtures(tempDir(), twice)).rejects.toThrow(
      'odd/repo.yaml: commit c1: "README.md" is declared twice',
    );
    const folder = rootWith(commitWith('    symlinks: { README.md/inner: target }'));
    await expect(buildFixtures(tempDir(), folder)).rejects.toThrow(
      'odd/repo.yaml: commit c1: "README.md" is both an entry and a folder',
    );
  });
});
