import { redact } from '../../shared/redact.ts';
import type { SourceReason } from '../../shared/reasons.ts';
import type { GitError } from '../errors.ts';
import { type FailureFacts, transportFailure } from '../failure.ts';
import { DEFAULT_GIT_MEMORY_BYTES } from '../limits.ts';
import type { GitRunResult } from './run.ts';

/** git's messages (LC_ALL=C) by the source reason they mean, first match wins. */
const RULES: Array<[SourceReason, RegExp]> = [
  // A process past its address space (git.maxMemory): xmalloc's "Out of memory, malloc failed", a failed mmap.
  ['source-too-large', /Out of memory|Cannot allocate memory|mmap failed/i],
  ['source-disk-full', /No space left on device|Disk quota exceeded|File too large|died of signal 25\b/i],
  ['source-timeout', /Operation timed out|Operation too slow|Connection timed out|timed out after/i],
  // curl refuses a redirect to a protocol GIT_ALLOW_PROTOCOL does not list: from https, that is http.
  ['source-insecure-redirect', /Protocol "?http"? not supported or disabled/i],
  [
    'source-redirect-refused',
    /Protocol "?[a-z0-9+.-]+"? not supported or disabled|Maximum \(\d+\) redirects followed|returned error: 30\d\b/i,
  ],
  [
    'source-auth-failed',
    /could not read (Username|Password)|Authentication failed|returned error: 40[13]\b|HTTP 40[13]\b|Permission denied \(|Host key verification failed/i,
  ],
  [
    'source-repository-not-found',
    /returned error: 404\b|HTTP 404\b|repository '.*' not found|does not appear to be a git repository/i,
  ],
  ['source-http-error', /returned error: \d{3}\b|HTTP \d{3}\b/i],
  [
    'source-unreachable',
    /Failed to connect|Could not resolve (host|hostname|proxy)|Connection refused|No route to host|Network is unreachable|Couldn't connect to server|Connection closed by remote host/i,
  ],
  // index-pack's word for a corrupt object of the pack it receives, before the remote's "bad object <id>".
  ['source-pack-invalid', /pack has bad object/i],
  [
    'source-commit-not-found',
    /not our ref|unadvertised object|couldn't find remote ref|no such remote ref|bad object/i,
  ],
  [
    'source-pack-invalid',
    /early EOF|index-pack failed|unexpected end of file|bad pack|pack has|protocol error|hung up unexpectedly|expected flush|invalid index-pack output|unpack-objects|inflate|fetch-pack:|sideband|expected '[a-z-]+'/i,
  ],
];

/** git's last lines that say what failed (progress left out), cleaned of credentials: for the log. */
function logOf(stderr: string, secrets: readonly string[]): string {
  const lines = stderr
    .split(/[\r\n]/)
    .map((line) => line.trim())
    .filter((line) => line !== '' && !/^(remote: )?[A-Za-z ]+:\s+\d+% \(/.test(line));
  return redact(lines.slice(-5).join(' | '), secrets).slice(0, 2000) || 'git failed without a message';
}

/** What the stderr lets us name without repeating it: the HTTP status, the full-disk kind, the redirect kind. */
function factsOf(reason: SourceReason, stderr: string, memoryBytes: number): FailureFacts {
  const status = /returned error: (\d{3})\b|HTTP (\d{3})\b/.exec(stderr);
  if (reason === 'source-http-error' && status !== null) return { status: Number(status[1] ?? status[2]) };
  if (reason === 'source-disk-full')
    return {
      errno: /Disk quota/i.test(stderr)
        ? 'EDQUOT'
        : /File too large|signal 25/i.test(stderr)
          ? 'EFBIG'
          : 'ENOSPC',
    };
  if (reason === 'source-redirect-refused')
    return { redirect: /Maximum \(\d+\) redirects/i.test(stderr) ? 'too-many' : 'refused' };
  if (reason === 'source-too-large') return { memoryBytes };
  if (reason === 'source-fetch-failed' && /remote error:/i.test(stderr)) return { remoteError: true };
  if (/Read-only file system/i.test(stderr)) return { errno: 'EROFS' };
  if (/Permission denied(?! \()/i.test(stderr)) return { errno: 'EACCES' };
  return {};
}

export interface RunContext {
  /** Credentials the child used, removed from what is logged. */
  secrets?: readonly string[];
  timeoutMs?: number;
  deadlineMs?: number;
  /** Whether redirects were followed (a 3xx answer then means a request after the first was redirected). */
  followRedirects?: boolean;
  /** The address space the child had (git.maxMemory). */
  memoryBytes?: number;
}

/** Maps a failed git command to a stable source reason and our sentence; git's words go to the log only. */
export function classifyRun(result: GitRunResult, what: string, context: RunContext = {}): GitError {
  const log = logOf(result.stderr, context.secrets ?? []);
  if (result.stopped === 'deadline')
    return transportFailure('source-timeout', what, { deadlineMs: context.deadlineMs ?? 0 }, { log });
  if (result.stopped === 'idle')
    return transportFailure('source-timeout', what, { timeoutMs: context.timeoutMs ?? 0 }, { log });
  if (result.stopped === 'closed')
    return transportFailure('source-fetch-failed', what, { closed: true }, { log });
  const reason = RULES.find(([, pattern]) => pattern.test(result.stderr))?.[0] ?? 'source-fetch-failed';
  const facts = factsOf(reason, result.stderr, context.memoryBytes ?? DEFAULT_GIT_MEMORY_BYTES);
  if (reason === 'source-redirect-refused' && facts.redirect === 'refused' && context.followRedirects)
    facts.redirect = 'not-first';
  if (reason === 'source-timeout') facts.timeoutMs = context.timeoutMs ?? 0;
  return transportFailure(reason, what, facts, { log });
}
