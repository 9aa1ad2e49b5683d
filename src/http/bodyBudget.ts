/** Bytes of request bodies held at once, all requests together: past it a new body is refused with 503. */
export const MAX_BODY_BYTES_IN_FLIGHT = 64 * 1024 * 1024;
/** A body (of any size) must arrive within this long after its request's headers, or the request gets 408. */
export const BODY_DEADLINE_MS = 10_000;
/** Bytes of one body at most, but the webhook's (`webhook.maxBodyBytes`): the SDK adapter's own cap. */
export const MAX_REQUEST_BODY_BYTES = 4 * 1024 * 1024;
/** A client refused for want of room is asked to come back this much later. */
export const BODY_RETRY_AFTER_S = 5;

export interface BodyLimits {
  /** MAX_BODY_BYTES_IN_FLIGHT unless a test says otherwise. */
  inFlightBytes: number;
  /** BODY_DEADLINE_MS unless a test says otherwise. */
  deadlineMs: number;
}

export const DEFAULT_BODY_LIMITS: BodyLimits = {
  inFlightBytes: MAX_BODY_BYTES_IN_FLIGHT,
  deadlineMs: BODY_DEADLINE_MS,
};

/** The bytes every body being read or served holds, against one bound. */
export interface BodyBudget {
  /** Takes `bytes` more; `false` (and nothing taken) when they would pass the bound. */
  take(bytes: number): boolean;
  give(bytes: number): void;
  /** Bytes taken and not given back. */
  readonly held: number;
}

export function createBodyBudget(maxBytes: number): BodyBudget {
  let held = 0;
  return {
    take(bytes) {
      if (held + bytes > maxBytes) return false;
      held += bytes;
      return true;
    },
    give(bytes) {
      held -= bytes;
    },
    get held() {
      return held;
    },
  };
}
