import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { catFileReader } from '../../src/git/cli/catFile.ts';
import { makeRepo } from '../helpers/repo.ts';

/** This process's `git cat-file` children reading `gitdir`. */
const readersOf = (gitdir: string): string[] =>
  execFileSync('ps', ['-o', 'args=', '--ppid', String(process.pid)], { encoding: 'utf8' })
    .split('\n')
    .filter((args) => args.includes(gitdir) && args.includes('cat-file'));

/** Resolves once `done()` holds, checking after each turn of the timers (what is awaited is an event). */
async function until(done: () => boolean): Promise<void> {
  while (!done()) await new Promise((resolve) => setTimeout(resolve, 10));
}

describe('a cat-file reader with nothing asked of it', () => {
  it('ends its process after the idle time, and starts one again at the next read, with the same answer', async () => {
    const repo = makeRepo({ 'a/SKILL.md': 'alpha\n' });
    const gitdir = path.join(repo.dir, '.git');
    const blob = execFileSync('git', ['--git-dir', gitdir, 'rev-parse', `${repo.commit}:a/SKILL.md`], {
      encoding: 'utf8',
    }).trim();
    const reader = catFileReader('git', gitdir, undefined, true, undefined, 50);
    const first = await reader.read(blob);
    expect(readersOf(gitdir)).toHaveLength(1);
    await until(() => readersOf(gitdir).length === 0);
    const again = await reader.read(blob);
    expect([first?.type, Buffer.from(first!.data).toString()]).toEqual(['blob', 'alpha\n']);
    expect([again?.type, Buffer.from(again!.data).toString()]).toEqual(['blob', 'alpha\n']);
    expect(readersOf(gitdir)).toHaveLength(1);
    await reader.close();
    expect(readersOf(gitdir)).toEqual([]);
  });

  it('keeps its process while reads keep coming inside the idle time', async () => {
    const repo = makeRepo({ 'a/SKILL.md': 'alpha\n' });
    const gitdir = path.join(repo.dir, '.git');
    const reader = catFileReader('git', gitdir, undefined, true, undefined, 60_000);
    await reader.read(repo.commit);
    const pid = readersOf(gitdir);
    await reader.read(repo.commit);
    expect(readersOf(gitdir)).toEqual(pid);
    await reader.close();
  });
});
