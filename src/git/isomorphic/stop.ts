import type { SourceReason } from '../../shared/reasons.ts';
import type { FailureFacts } from '../failure.ts';
import type { Refusal } from '../packGuard.ts';

/** Why our HTTP client (or the pack it was writing) stopped a transfer: the reason and what our sentence names. */
export class TransportStop extends Error {
  constructor(
    readonly reason: Extract<
      SourceReason,
      | 'source-too-large'
      | 'source-timeout'
      | 'source-insecure-redirect'
      | 'source-redirect-refused'
      | 'source-pack-invalid'
    >,
    readonly facts: FailureFacts,
    message: string,
  ) {
    super(message);
    this.name = 'TransportStop';
  }
}

/** The pack guard's refusal, as the HTTP client stops a transfer with it. */
export const stopOf = (refusal: Refusal): TransportStop =>
  new TransportStop(refusal.reason, refusal.facts, refusal.why);
