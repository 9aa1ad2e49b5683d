import { expect } from 'vitest';
import { GitError } from '../../src/git/index.ts';

/** The GitError `call` rejects with, as its code and message; fails the test when it resolves or throws another. */
export async function gitFailure(call: Promise<unknown>): Promise<{ code: string; message: string }> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(GitError);
  return { code: (error as GitError).code, message: (error as GitError).message };
}
