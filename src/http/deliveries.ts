/** A delivery id seen again within this window is acknowledged without syncing again. */
export const REPLAY_WINDOW_MS = 60 * 60_000;
/** Delivery ids remembered at most; the oldest is forgotten first. */
export const MAX_REMEMBERED_DELIVERIES = 10_000;

export interface DeliveryLog {
  /** True when `id` was recorded within the window; records it otherwise. */
  seen(id: string): boolean;
}

export function createDeliveryLog(now: () => number = Date.now): DeliveryLog {
  // Insertion order is arrival order, so the oldest ids are first.
  const recorded = new Map<string, number>();
  return {
    seen(id) {
      const at = now();
      for (const [known, when] of recorded) {
        if (at - when < REPLAY_WINDOW_MS && recorded.size < MAX_REMEMBERED_DELIVERIES) break;
        recorded.delete(known);
      }
      if (recorded.has(id)) return true;
      recorded.set(id, at);
      return false;
    },
  };
}
