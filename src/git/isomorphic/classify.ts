import { redact } from '../../shared/redact.ts';
import { errnoReason, type SourceReason } from '../../shared/reasons.ts';
import { messageOf } from '../../shared/text.ts';
import { GitError } from '../errors.ts';
import { type FailureFacts, transportFailure } from '../failure.ts';
import { TransportStop } from './stop.ts';

const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'EPIPE',
]);
// isomorphic-git's names for a pack or protocol answer it could not use.
const BAD_PACK = new Set([
  'EmptyServerResponseError',
  'InternalError',
  'ParseError',
  'SmartHttpError',
  'UnknownTransportError',
]);

/** What isomorphic-git or Node said, with what the remote answered (isomorphic-git keeps it in `data`): for the log. */
function logOf(error: unknown): string {
  const response = (error as { data?: { response?: unknown } } | null)?.data?.response;
  const said =
    typeof response === 'string' && response !== '' ? ` (the remote said: ${response.slice(0, 500)})` : '';
  return redact(`${messageOf(error)}${said}`);
}

/**
 * Maps an error from isomorphic-git, Node or our HTTP client to a stable source reason and our own sentence;
 * what they said (remote text included) goes to the log only. `stopped` is why our HTTP client stopped a request,
 * which isomorphic-git may have reported as an error of its own.
 */
export function classify(thrown: unknown, what: string, stopped?: unknown, timeoutMs?: number): GitError {
  if (stopped instanceof TransportStop)
    return transportFailure(stopped.reason, what, stopped.facts, { log: logOf(thrown), cause: thrown });
  const error = stopped ?? thrown;
  if (error instanceof GitError) return error;
  if (error instanceof TransportStop)
    return transportFailure(error.reason, what, error.facts, { log: error.message, cause: error });
  const code = (error as { code?: string } | null)?.code ?? '';
  const status = (error as { data?: { statusCode?: number } } | null)?.data?.statusCode;
  const fail = (reason: SourceReason, facts: FailureFacts = {}) =>
    transportFailure(reason, what, facts, { log: logOf(error), cause: error });
  if (code === 'HttpError' && (status === 401 || status === 403)) return fail('source-auth-failed');
  if (code === 'UserCanceledError') return fail('source-auth-failed');
  if (code === 'HttpError' && status === 404) return fail('source-repository-not-found');
  if (code === 'HttpError') return fail('source-http-error', { status });
  if (code === 'ETIMEDOUT') return fail('source-timeout', { timeoutMs: timeoutMs ?? 0 });
  if (UNREACHABLE.has(code)) return fail('source-unreachable');
  if (errnoReason(error) !== undefined) return fail('source-disk-full', { errno: code });
  // git's ERR packet where the ref advertisement should begin: the remote's own error, not a bad pack.
  const actual = (error as { data?: { actual?: unknown } } | null)?.data?.actual;
  if (code === 'ParseError' && typeof actual === 'string' && actual.startsWith('ERR '))
    return fail('source-fetch-failed', { remoteError: true });
  if (BAD_PACK.has(code)) return fail('source-pack-invalid');
  if (/^E[A-Z]+$/.test(code) && (error as { syscall?: string }).syscall !== undefined)
    return fail('source-fetch-failed', { errno: code });
  return fail('source-fetch-failed');
}
