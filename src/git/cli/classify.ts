import type { SourceReason } from '../../shared/reasons.ts';
import { GitError } from '../errors.ts';
import { redactText } from '../url.ts';
import type { RunResult } from './run.ts';

/** git's messages (LC_ALL=C) by the source reason they mean, first match wins. */
const RULES: Array<[SourceReason, RegExp]> = [
  ['source-disk-full', /No space left on device|Disk quota exceeded/i],
  ['source-timeout', /Operation timed out|Operation too slow|Connection timed out|timed out after/i],
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
  [
    'source-commit-not-found',
    /not our ref|unadvertised object|couldn't find remote ref|no such remote ref|bad object/i,
  ],
  [
    'source-pack-invalid',
    /early EOF|index-pack failed|unexpected end of file|bad pack|pack has|protocol error|hung up unexpectedly|expected flush|invalid index-pack output|unpack-objects|inflate|fetch-pack:|sideband/i,
  ],
];

/** The line of git's stderr that says what failed: the last `fatal:` or `error:` line, else the last line. */
function detailOf(stderr: string, secrets: readonly string[]): string {
  const lines = stderr
    .split(/[\r\n]/)
    .map((line) => line.trim())
    .filter((line) => line !== '' && !/^(remote: )?[A-Za-z ]+:\s+\d+% \(/.test(line));
  const last = [...lines].reverse().find((line) => /^(fatal|error):/.test(line)) ?? lines.at(-1) ?? '';
  return redactText(last, secrets).slice(0, 500) || 'git failed without a message';
}

/** Maps a failed git command to a stable source reason, its detail cleaned of anything secret. */
export function classifyRun(
  result: RunResult,
  what: string,
  secrets: readonly string[] = [],
  timeoutMs?: number,
): GitError {
  if (result.timedOut)
    return new GitError('source-timeout', `${what}: nothing received for ${timeoutMs ?? '?'} ms`);
  const reason = RULES.find(([, pattern]) => pattern.test(result.stderr))?.[0] ?? 'source-fetch-failed';
  return new GitError(reason, `${what}: ${detailOf(result.stderr, secrets)}`);
}
