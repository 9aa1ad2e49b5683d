import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { type GitError, openLocalRepository, readBlob } from '../../src/git/index.ts';
import { makeRepo } from '../helpers/repo.ts';

describe('reading a store that another program writes', () => {
  it('finds a loose object written after its absence was remembered', async () => {
    const { dir } = makeRepo({ 'README.md': 'hello\n' });
    const repo = await openLocalRepository(dir);
    const content = 'written later by another program\n';
    const oid = execFileSync('git', ['-C', dir, 'hash-object', '--stdin'], {
      input: content,
      encoding: 'utf8',
    }).trim();
    const missing = await readBlob(repo, oid).catch((error: unknown) => error);
    expect((missing as GitError).code).toBe('source-incomplete');
    execFileSync('git', ['-C', dir, 'hash-object', '-w', '--stdin'], { input: content });
    expect(new TextDecoder().decode(await readBlob(repo, oid))).toBe(content);
  });
});
