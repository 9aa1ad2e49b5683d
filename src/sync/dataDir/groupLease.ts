import type { Membership } from './membership.ts';

/**
 * `membership` with one lease per `refs:` source: a ref's source (`groupOf` names its `refs:` source) is synced by
 * whoever holds its group's lease, which the group's listing takes; giving a ref up leaves the group's lease held.
 */
export function leasedByGroup(
  membership: Membership,
  groupOf: (id: string) => string | undefined,
): Membership {
  const leaseOf = (id: string) => groupOf(id) ?? id;
  return {
    ...membership,
    leaseOf,
    lease: (id) => membership.lease(leaseOf(id)),
    holds: (id) => membership.holds(leaseOf(id)),
    release(id) {
      if (groupOf(id) === undefined) membership.release(id);
    },
  };
}
