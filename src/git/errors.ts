import type { SourceReason } from '../shared/reasons.ts';

export interface GitErrorOptions extends ErrorOptions {
  /** What git or the remote said, cleaned of credentials: for the log only (it may name local paths). */
  log?: string;
}

/**
 * What went wrong talking to a repository. `code` is a stable source reason (shared/reasons.ts); the message is
 * a sentence of ours, the same under both backends, safe to show a client and to keep in state.json: no remote
 * text, no local path. What git or the remote said goes to `log`.
 */
export class GitError extends Error {
  readonly code: SourceReason;
  readonly log?: string;
  constructor(code: SourceReason, detail: string, options: GitErrorOptions = {}) {
    const { log, ...rest } = options;
    super(detail, rest);
    this.name = 'GitError';
    this.code = code;
    if (log !== undefined && log !== '') this.log = log;
  }

  /** The client-safe sentence (the message). */
  get detail(): string {
    return this.message;
  }
}
