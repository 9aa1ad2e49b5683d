import { errnoReason, type SourceReason } from '../../shared/reasons.ts';
import { messageOf } from '../../shared/text.ts';
import { GitError } from '../errors.ts';

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

/** Maps an error from isomorphic-git or the network to a stable source reason. */
export function classify(error: unknown, what: string): GitError {
  if (error instanceof GitError) return error;
  const code = (error as { code?: string } | null)?.code ?? '';
  const status = (error as { data?: { statusCode?: number } } | null)?.data?.statusCode;
  const fail = (reason: SourceReason, detail: string) =>
    new GitError(reason, `${what}: ${detail}`, { cause: error });
  if (code === 'HttpError' && (status === 401 || status === 403))
    return fail('source-auth-failed', `the remote refused the credentials (HTTP ${status})`);
  if (code === 'UserCanceledError')
    return fail('source-auth-failed', 'the remote asked for credentials that were refused or not configured');
  if (code === 'HttpError' && status === 404)
    return fail('source-repository-not-found', 'the remote has no repository at that URL (HTTP 404)');
  if (code === 'HttpError') return fail('source-http-error', `the remote answered HTTP ${status}`);
  if (code === 'ETIMEDOUT') return fail('source-timeout', messageOf(error));
  if (UNREACHABLE.has(code)) return fail('source-unreachable', `${code}: the remote could not be reached`);
  const errno = errnoReason(error);
  if (errno !== undefined) return fail(errno.reason, errno.detail);
  if (BAD_PACK.has(code)) return fail('source-pack-invalid', messageOf(error));
  return fail('source-fetch-failed', messageOf(error));
}
