import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { blobAccess, openLocalRepository, walkCommit } from '../../src/git/index.ts';
import { indexCommit } from '../../src/index/index.ts';
import { BACKENDS } from '../helpers/backends.ts';
import { fixture } from '../helpers/fixtures.ts';
import { git, gitEnv } from '../helpers/git.ts';

const mirrors = fixture('mirrors');
const c1 = mirrors.commits['c1']!;

/** The digest of what `git show <c1>:<path>` prints: the bytes a URI of that path must serve. */
const shownDigest = (path: string) =>
  `sha256:${createHash('sha256')
    .update(execFileSync('git', ['-C', mirrors.gitdir, 'show', `${c1}:${path}`], { env: gitEnv() }))
    .digest('hex')}`;

const alias = (path: string, dir: string, reached = true) => [
  path,
  'skill-alias',
  'info',
  reached
    ? `symlink to the skill ${dir}: the same skill, counted once, at ${dir}`
    : `symlink to the skill ${dir}, which the search paths do not reach: the skill is found at ${dir}`,
];

const REFUSED = [
  [
    '.gemini/skills/escape/SKILL.md',
    'skill-link-outside',
    'error',
    'SKILL.md is a symlink to "../../../../outside/SKILL.md", which leaves the repository; the skill is not served',
  ],
  [
    '.gemini/skills/loop/SKILL.md',
    'skill-link-loop',
    'error',
    'SKILL.md is a symlink chain longer than 8 hops (a loop); the skill is not served',
  ],
  [
    '.gemini/skills/moved/SKILL.md',
    'skill-link-dangling',
    'error',
    'SKILL.md is a symlink to "../../../skills/moved/SKILL.md": nothing there in this commit; the skill is not served',
  ],
  [
    '.gemini/skills/notes/SKILL.md',
    'skill-md-not-file',
    'error',
    'SKILL.md is a symlink to docs/notes.md, which is not the SKILL.md of a skill folder; the skill is not served',
  ],
];

describe.each(BACKENDS)('skills mirrored through symlinks ($name backend)', ({ settings }) => {
  async function indexed(paths?: string[]) {
    const repo = await openLocalRepository(mirrors.gitdir, settings);
    try {
      return await indexCommit({ ...(await walkCommit(repo, c1)), ...blobAccess(repo), paths });
    } finally {
      await repo.close();
    }
  }

  it('serves each skill once at its own path; every link to it is information, the broken ones errors', async () => {
    const index = await indexed();
    expect(index.skills.map((s) => [s.dir, s.servedDir, s.files.map((f) => f.path)])).toEqual([
      ['extra/lint', 'extra/lint', ['extra/lint/SKILL.md', 'extra/lint/rules.md']],
      ['skills/pdf', 'skills/pdf', ['skills/pdf/SKILL.md', 'skills/pdf/guide.md']],
      ['skills/review', 'skills/review', ['skills/review/SKILL.md']],
    ]);
    expect(index.problems.map((p) => [p.path, p.reason, p.severity, p.detail])).toEqual([
      alias('.codex/skills/lint', 'extra/lint'),
      alias('.codex/skills/pdf', 'skills/pdf'),
      alias('.gemini/skills/chain/SKILL.md', 'skills/pdf'),
      ...REFUSED.slice(0, 4),
      alias('.gemini/skills/pdf/SKILL.md', 'skills/pdf'),
      alias('.gemini/skills/review/SKILL.md', 'skills/review'),
    ]);
  });

  it('finds the skills that only folder links under paths reach, at their own paths (git show <commit>:<path>)', async () => {
    const index = await indexed(['.codex/skills']);
    expect(index.skills.map((s) => [s.servedDir, s.files.map((f) => [f.path, f.digest])])).toEqual(
      ['extra/lint', 'skills/pdf'].map((dir) => [
        dir,
        git(['-C', mirrors.gitdir, 'ls-tree', '-r', '--name-only', c1, `${dir}/`])
          .split('\n')
          .map((path) => [path, shownDigest(path)]),
      ]),
    );
    expect(index.problems.map((p) => [p.path, p.reason, p.severity, p.detail])).toEqual([
      alias('.codex/skills/lint', 'extra/lint', false),
      alias('.codex/skills/pdf', 'skills/pdf', false),
    ]);
  });
});
