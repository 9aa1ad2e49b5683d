import fsp from 'node:fs/promises';
import path from 'node:path';
import type { PromiseFsClient } from 'isomorphic-git';
import { GitError } from './errors.ts';

/**
 * The file system for reading a user's work tree with isomorphic-git: reads as they are; the index it would write
 * back after refreshing stat data (`statusMatrix` does) is not written; any other write fails, so none can happen.
 */
export function readOnlyFs(gitdir: string): PromiseFsClient {
  const index = path.resolve(gitdir, 'index');
  const refuse = (what: string) => async (file: string) => {
    throw new GitError(
      'source-unsupported',
      `reading the work tree tried to ${what} ${path.basename(String(file))}: it only reads`,
    );
  };
  return {
    promises: {
      readFile: fsp.readFile,
      stat: fsp.stat,
      lstat: fsp.lstat,
      readdir: fsp.readdir,
      readlink: fsp.readlink,
      writeFile: async (file: string) => {
        // Refreshed stat data only speeds up the next read: the user's index stays as it is.
        if (path.resolve(String(file)) !== index) await refuse('write')(file);
      },
      mkdir: refuse('create'),
      rmdir: refuse('remove'),
      unlink: refuse('remove'),
      symlink: refuse('create'),
    },
  };
}
