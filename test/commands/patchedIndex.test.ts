import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { patchedIndexer } from '../../src/commands/patchedIndex.ts';
import { BACKENDS } from '../helpers/backends.ts';
import { git } from '../helpers/git.ts';
import { makeRepo } from '../helpers/repo.ts';

const FIXED = '---\nname: ahrefs\ndescription: "Use when: asked."\n---\nbody\n';

describe.each(BACKENDS)('patchedIndexer ($name backend)', ({ settings }) => {
  it('indexes a commit with files replaced in memory exactly as git would index a commit holding them', async () => {
    const repo = makeRepo({
      'skills/ahrefs/SKILL.md': '---\nname: Ahrefs\ndescription: Use when: asked.\n---\nbody\n',
      'skills/ahrefs/guide.md': 'guide\n',
      'skills/ok/SKILL.md': '---\nname: ok\ndescription: Fine.\n---\n',
    });
    const objects = () => git(['-C', repo.dir, 'count-objects', '-v']);
    const held = objects();
    const options = { paths: [], strictNames: false, git: settings };
    const patched = await patchedIndexer(repo.dir, repo.commit, options);
    const before = await patched.index(new Map());
    const after = await patched.index(new Map([['skills/ahrefs/SKILL.md', new TextEncoder().encode(FIXED)]]));
    await patched.close();
    // Nothing was written to the repository.
    expect(objects()).toBe(held);
    expect(before.skills.map((skill) => skill.dir)).toEqual(['skills/ok']);
    expect(before.problems.map((p) => p.reason)).toEqual(['frontmatter-invalid']);
    // The same bytes committed: the index of that commit is the patched one (but for the commit it names).
    writeFileSync(path.join(repo.dir, 'skills/ahrefs/SKILL.md'), FIXED);
    git(['-C', repo.dir, 'commit', '--quiet', '-am', 'fixed']);
    const committed = await patchedIndexer(repo.dir, git(['-C', repo.dir, 'rev-parse', 'HEAD']), options);
    const expected = await committed.index(new Map());
    await committed.close();
    expect(after.skills).toEqual(expected.skills);
    expect(after.problems).toEqual([]);
    expect(after.commit).toBe(repo.commit);
  });
});
