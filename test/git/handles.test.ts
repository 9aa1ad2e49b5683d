import { execFileSync } from 'node:child_process';
import { cpSync, readdirSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openObjectDatabase } from '../../src/git/isomorphic/odb.ts';
import { packWriter } from '../../src/git/isomorphic/packWriter.ts';
import { transferGuard } from '../../src/git/packGuard.ts';
import { fixture } from '../helpers/fixtures.ts';
import { tempDir } from '../helpers/temp.ts';

/** The files this process holds open under `dir` (Linux: /proc/self/fd), deleted ones included. */
const openUnder = (dir: string) =>
  readdirSync('/proc/self/fd')
    .map((fd) => {
      try {
        return readlinkSync(path.join('/proc/self/fd', fd));
      } catch {
        return '';
      }
    })
    .filter((target) => target.startsWith(dir));

// Each leak here was a handle closed only by garbage collection: Node's DEP0137 warning.
describe('the isomorphic backend leaves no file open', () => {
  it('an abort while the first write opens the temporary file closes it and removes it', async () => {
    const gitdir = tempDir('skillpin-packwriter-');
    const guard = transferGuard({ maxBytes: 1024, maxObjects: 10, deadlineMs: 60_000 });
    const writer = packWriter({ gitdir, baseById: async () => undefined, guard });
    // A pack header's first bytes; the transfer is stopped (a timeout) before the write has its file.
    const writing = writer.write(Buffer.from('PACK\0\0\0\x02\0\0\0\x01'));
    await writer.abort();
    await writing;
    expect(readdirSync(path.join(gitdir, 'objects', 'pack'))).toEqual([]);
    expect(openUnder(gitdir)).toEqual([]);
    // Later bytes of the stopped transfer are not written anywhere.
    await writer.write(Buffer.from('more'));
    expect(readdirSync(path.join(gitdir, 'objects', 'pack'))).toEqual([]);
  });

  it('a close while a read lists the packs closes the packs that listing opens', async () => {
    const gitdir = path.join(tempDir('skillpin-odb-'), 'catalog.git');
    cpSync(fixture('catalog').gitdir, gitdir, { recursive: true });
    execFileSync('git', ['--git-dir', gitdir, 'repack', '-a', '-d', '-q']);
    const objects = openObjectDatabase(gitdir);
    const c2 = fixture('catalog').commits['c2']!;
    const reading = objects.read(c2);
    await objects.close();
    expect((await reading)?.type).toBe('commit');
    expect(openUnder(gitdir)).toEqual([]);
  });
});
