import type { CatalogState } from '../catalog/index.ts';
import type { DamageLedger } from './damage.ts';
import type { SourceRecord } from './step.ts';

/** What the catalog serves of the records: each source's commits, why a failing one fails (damage first). */
export function catalogStateOf(
  records: ReadonlyMap<string, SourceRecord>,
  damage: Pick<DamageLedger, 'error'>,
): CatalogState {
  return {
    sources: [...records.values()].flatMap((r) => (r.served === undefined ? [] : [r.served])),
    failures: [...records].flatMap(([id, r]) => {
      const damaged = damage.error(id);
      if (damaged !== undefined) return [{ id, reason: damaged.reason, detail: damaged.detail }];
      return r.failure === undefined ? [] : [r.failure];
    }),
  };
}
