import { isDeepStrictEqual } from 'node:util';
import type { SourceConfig } from '../config/index.ts';

/** What a reconfigure does, by source id. */
export interface Reconfigured {
  added: string[];
  removed: string[];
  changed: string[];
}

/** The sources `next` adds, removes and changes (any setting of theirs differs) against those `running`. */
export function sourceChanges(running: readonly SourceConfig[], next: readonly SourceConfig[]): Reconfigured {
  const known = new Map(running.map((source) => [source.id, source]));
  return {
    added: next.filter((s) => !known.has(s.id)).map((s) => s.id),
    removed: running.filter((s) => !next.some((n) => n.id === s.id)).map((s) => s.id),
    changed: next.filter((s) => known.has(s.id) && !isDeepStrictEqual(known.get(s.id), s)).map((s) => s.id),
  };
}
