import { errnoReason, type SourceReason } from '../shared/reasons.ts';
import { GitError, type GitErrorOptions } from './errors.ts';
import { MAX_LARGE_BLOB_BYTES, MAX_OBJECT_BYTES, MAX_REDIRECTS } from './limits.ts';

/** What a backend learned about a failure that our sentence may name: numbers and settings, never remote text. */
export interface FailureFacts {
  status?: number;
  /** The idle timeout that ran out (sync.timeout). */
  timeoutMs?: number;
  /** The deadline that ran out (sync.deadline). */
  deadlineMs?: number;
  /** The byte limit the transfer passed (sync.maxFetchBytes). */
  maxBytes?: number;
  /** The object limit the transfer's pack passed (sync.maxFetchObjects). */
  maxObjects?: number;
  /** The transfer's blobs over MAX_OBJECT_BYTES declared more than MAX_LARGE_BLOB_BYTES together. */
  largeBlobs?: boolean;
  /** The address space a git process ran out of (git.maxMemory). */
  memoryBytes?: number;
  /** The byte limit of a ref listing (MAX_REF_LISTING_BYTES) that the remote's passed. */
  listingBytes?: number;
  /** The repository was closed while the transfer ran (the server stops). */
  closed?: boolean;
  /** A file-system error code (ENOSPC, EFBIG, EROFS, EACCES): which one, never the path. */
  errno?: string;
  /** Why a redirect was not followed. */
  redirect?: 'refused' | 'too-many' | 'not-first';
  /** The remote answered with an error line of its own (git's `ERR` packet): its words go to the log only. */
  remoteError?: boolean;
}

/** Which bound a transfer passed. */
function tooLarge(facts: FailureFacts): string {
  if (facts.maxBytes !== undefined) return `the transfer passed ${facts.maxBytes} bytes (sync.maxFetchBytes)`;
  if (facts.maxObjects !== undefined)
    return `the transfer holds more than ${facts.maxObjects} objects (sync.maxFetchObjects)`;
  if (facts.memoryBytes !== undefined)
    return `git ran out of the ${facts.memoryBytes} bytes of memory it may take (git.maxMemory)`;
  if (facts.listingBytes !== undefined) return `the remote's ref listing passed ${facts.listingBytes} bytes`;
  if (facts.largeBlobs)
    return `the blobs over ${MAX_OBJECT_BYTES} bytes of the transfer inflate to more than ${MAX_LARGE_BLOB_BYTES} bytes together`;
  return `an object of the transfer inflates to more than ${MAX_OBJECT_BYTES} bytes`;
}

/** The sentence of each transport failure: the same whichever backend met it, and nothing the remote chose. */
function sentence(reason: SourceReason, facts: FailureFacts): string {
  switch (reason) {
    case 'source-auth-failed':
      return 'the remote refused access: credentials missing or not accepted';
    case 'source-repository-not-found':
      return 'the remote has no repository at that URL (HTTP 404), or none these credentials can see';
    case 'source-http-error':
      return facts.status === undefined
        ? 'the remote answered with an HTTP error'
        : `the remote answered HTTP ${facts.status}`;
    case 'source-unreachable':
      return 'the remote could not be reached (connection refused or reset, unknown host, no route)';
    case 'source-timeout':
      return facts.deadlineMs !== undefined
        ? `the transfer did not finish within ${facts.deadlineMs} ms (sync.deadline)`
        : `the remote sent nothing for ${facts.timeoutMs ?? '?'} ms (sync.timeout)`;
    case 'source-commit-not-found':
      return 'the remote does not have the commit, or will not serve it';
    case 'source-pack-invalid':
      return 'the remote sent an empty, truncated or corrupt pack';
    case 'source-too-large':
      return tooLarge(facts);
    case 'source-insecure-redirect':
      return 'the remote redirected from https to http, which is refused';
    case 'source-redirect-refused':
      return facts.redirect === 'too-many'
        ? `the remote redirected more than ${MAX_REDIRECTS} times`
        : facts.redirect === 'not-first'
          ? 'the remote redirected a request after the first one of the transfer, which git does not follow'
          : 'the remote redirected, and sync.redirects is refuse';
    case 'source-disk-full':
      return (
        errnoReason({ code: facts.errno ?? 'ENOSPC' })?.detail ??
        'no space left on the device holding dataDir'
      );
    default:
      if (facts.closed) return 'stopped: the repository was closed before the transfer ended';
      if (facts.remoteError) return 'the remote answered with an error (its words are in the log)';
      return facts.errno !== undefined
        ? `a file operation in dataDir failed (${facts.errno})`
        : 'git failed (what it said is in the log)';
  }
}

/** A transport failure: `<what>: <our sentence>` for clients and state.json, the backend's own words in `log`. */
export function transportFailure(
  reason: SourceReason,
  what: string,
  facts: FailureFacts = {},
  options: GitErrorOptions = {},
): GitError {
  return new GitError(reason, `${what}: ${sentence(reason, facts)}`, options);
}

/** An object a reader will not inflate into memory (its header says how large it is). */
export function objectTooLarge(what: string, size: number): GitError {
  return new GitError(
    'source-too-large',
    `${what} inflates to ${size} bytes, more than the ${MAX_OBJECT_BYTES} one object may`,
  );
}
