/** What went wrong talking to a repository; `code` is a stable source reason (see skills/reasons.ts). */
export type GitFailure =
  | 'source-not-a-repository'
  | 'source-commit-not-found'
  | 'source-ref-not-found'
  | 'source-ref-ambiguous'
  | 'source-incomplete'
  | 'source-auth-failed'
  | 'source-repository-not-found'
  | 'source-unreachable'
  | 'source-timeout'
  | 'source-http-error'
  | 'source-pack-invalid'
  | 'source-disk-full'
  | 'source-fetch-failed';

export class GitError extends Error {
  readonly code: GitFailure;
  constructor(code: GitFailure, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'GitError';
    this.code = code;
  }
}

/** An error's own message, one line, for wrapping library errors without their stacks. */
export function messageOf(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.split('\n', 1)[0] ?? text;
}
