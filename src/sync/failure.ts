import type { SourceFailure } from '../catalog/index.ts';
import { causeOf, GitError } from '../git/index.ts';
import type { Logger } from '../shared/log.ts';
import { errnoReason } from '../shared/reasons.ts';
import { messageOf } from '../shared/text.ts';
import type { SourceRecord } from './record.ts';

/** Why a sync failed, as a source failure: git's reason, the OS's, or an internal error (said in the log). */
export function failureOf(id: string, error: unknown): SourceFailure {
  if (error instanceof GitError) return { id, reason: error.code, detail: error.message };
  const errno = errnoReason(error);
  if (errno !== undefined) return { id, ...errno };
  return { id, reason: 'source-internal', detail: 'unexpected error; see the log' };
}

/** What git said of a failed sync, for the outcome: absent, not undefined, when it said nothing. */
export function causeField(error: unknown): { cause?: string } {
  const cause = causeOf(error);
  return cause === undefined ? {} : { cause };
}

/** A failed sync in the log: its reason and sentence, git's own log of it, and the message of an internal error. */
export function logFailure(
  logger: Logger,
  failure: SourceFailure,
  error: unknown,
  fields: Record<string, unknown>,
): void {
  logger.error(
    {
      source: failure.id,
      reason: failure.reason,
      ...fields,
      ...(error instanceof GitError && error.log !== undefined ? { log: error.log } : {}),
      ...(failure.reason === 'source-internal' ? { err: messageOf(error) } : {}),
    },
    failure.detail,
  );
}

/** The record of a sync that failed at `at`: what the source served before stays, and the failure is said. */
export const failedRecord = (before: SourceRecord, failure: SourceFailure, at: string): SourceRecord => ({
  ...before,
  tried: true,
  failure,
  lastSync: at,
  lastError: { reason: failure.reason, detail: failure.detail, at },
});
