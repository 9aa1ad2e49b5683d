import type { ServedSource, SourceFailure } from '../catalog/index.ts';
import type { GroupListing, SourceState } from './dataDir/state.ts';

/** What the worker knows of one source. Replaced whole, never edited. */
export interface SourceRecord {
  served?: ServedSource;
  /** The latest sync in this process failed. */
  failure?: SourceFailure;
  /** A sync has finished in this process (readiness). */
  tried: boolean;
  lastSync?: string;
  lastSuccess?: string;
  lastError?: SourceState['lastError'];
  /** A `refs:` source: what its last listing found. */
  listing?: GroupListing;
}

/** What a source starts from (a start, a reconfigure), and the commits it held that it no longer serves. */
export interface Restored {
  record: SourceRecord;
  dropped: string[];
}

/** The commits a served set names: the current one, then the retained ones. */
export const commitsOf = (served: ServedSource | undefined): string[] =>
  served === undefined ? [] : [served.current, ...served.retained].map((ns) => ns.commit);
