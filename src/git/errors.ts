import type { SourceReason } from '../shared/reasons.ts';

/** What went wrong talking to a repository; `code` is a stable source reason (shared/reasons.ts). */
export class GitError extends Error {
  readonly code: SourceReason;
  constructor(code: SourceReason, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'GitError';
    this.code = code;
  }
}
