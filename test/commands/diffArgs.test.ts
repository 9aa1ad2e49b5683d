import { describe, expect, it } from 'vitest';
import { diff } from '../../src/commands/diff.ts';
import { EXIT } from '../../src/shared/exitCodes.ts';
import { fixture } from '../helpers/fixtures.ts';

describe('diff arguments', () => {
  it('refuses --paths outside the repository as check and the config do, before reading the repository', async () => {
    const { gitdir, commits } = fixture('versions');
    for (const bad of ['../x', '/etc', 'skills/../..']) {
      const out: string[] = [];
      const err: string[] = [];
      const io = { out: (t: string) => void out.push(t), err: (t: string) => void err.push(t) };
      const options = { repository: gitdir, from: commits['c1']!, to: commits['c2']!, paths: [bad] };
      expect(await diff({ ...options, format: 'text' }, io)).toBe(EXIT.usage);
      expect([out.join(''), err.join('')]).toEqual([
        '',
        `skillpin diff: --paths ${JSON.stringify(bad)}: must be a folder inside the repository (relative, no "..")\n`,
      ]);
    }
  });
});
