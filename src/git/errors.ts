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

/** How long the cause `causeOf` gives may be: the rest is in the log. */
export const MAX_CAUSE_CHARS = 300;

/**
 * What git or the remote said of a failure, in one line for the operator's stderr (never a client): git's first
 * `fatal:` line (else its first `error:` line, else its first line) without that word, control characters
 * dropped, at most MAX_CAUSE_CHARS. `undefined` when it said nothing.
 */
export function causeOf(error: unknown): string | undefined {
  if (!(error instanceof GitError) || error.log === undefined) return undefined;
  const lines = error.log.split(/\r?\n/).filter((line) => line.trim() !== '');
  const line =
    lines.find((l) => l.startsWith('fatal:')) ?? lines.find((l) => l.startsWith('error:')) ?? lines[0];
  if (line === undefined) return undefined;
  const clean = line
    .replace(/^(?:fatal|error): /, '')
    .replace(/[\u0000-\u001f\u007f-\u009f]/g, '')
    .trim();
  return clean.length > MAX_CAUSE_CHARS ? `${clean.slice(0, MAX_CAUSE_CHARS - 1)}…` : clean;
}
