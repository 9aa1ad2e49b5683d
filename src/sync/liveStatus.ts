import type { DamageLedger } from './damage.ts';
import type { Followed } from './followed.ts';
import type { SourceStatus } from '../shared/status.ts';
import { commitStatusOf, refOf, refsStatusOf } from './status.ts';
import type { SourceRecord } from './step.ts';

/** A running source's status: what it serves and when it syncs; damage found shows before its last error. */
export function liveStatusOf(
  { config, source, follower }: Followed,
  record: SourceRecord,
  damage: Pick<DamageLedger, 'error'>,
): SourceStatus {
  const next = follower.nextAt;
  return {
    id: source.id,
    repository: source.origin.repository,
    ref: refOf(config),
    current: record.served === undefined ? null : commitStatusOf(record.served.current),
    retained: record.served?.retained.map(commitStatusOf) ?? [],
    syncing: follower.syncing,
    lastSync: record.lastSync ?? null,
    lastSuccess: record.lastSuccess ?? null,
    nextSync: next === undefined ? null : new Date(next).toISOString(),
    lastError: damage.error(source.id) ?? record.lastError ?? null,
    ...refsStatusOf(config, record.listing),
  };
}
