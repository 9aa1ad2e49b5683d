import type { SourceReason } from '../shared/reasons.ts';
import type { Namespace } from './namespace.ts';

/** A source as served: its current commit (listed) and the commits it keeps serving (not listed). */
export interface ServedSource {
  id: string;
  current: Namespace;
  retained: readonly Namespace[];
  /** `false`: its current commit is served but not listed either (a ref of a `refs:` source past `list:`). */
  listed?: false;
  /** A ref of a `refs:` source: that source's id (a caller who may see it sees its refs). */
  group?: string;
}

/** A source that serves nothing, and why (stable reason code). */
export interface SourceFailure {
  id: string;
  reason: SourceReason;
  detail: string;
  /** A ref of a `refs:` source: that source's id. */
  group?: string;
}

export interface CatalogState {
  /** In configuration order. */
  sources: readonly ServedSource[];
  failures: readonly SourceFailure[];
}

/** What serving reads of the catalog: everything but the swap. */
export interface CatalogReader {
  readonly state: CatalogState;
  /** The namespace of `source` at `commit`, current or retained. */
  namespace(source: string, commit: string): Namespace | undefined;
  /** Namespaces that are listed: each source's current commit, unless the source is not listed. */
  listed(): readonly Namespace[];
  onChange(listener: (previous: CatalogState, next: CatalogState) => void): () => void;
}

/** The live set of namespaces. State is one immutable value, swapped whole in one assignment. */
export interface Catalog extends CatalogReader {
  swap(next: CatalogState): void;
}

export function createCatalog(initial: CatalogState = { sources: [], failures: [] }): Catalog {
  let state = initial;
  let byKey = keyed(state);
  const listeners = new Set<(previous: CatalogState, next: CatalogState) => void>();
  return {
    get state() {
      return state;
    },
    namespace: (source, commit) => byKey.get(`${source}@${commit}`),
    listed: () => listedOf(state),
    swap(next) {
      const previous = state;
      state = next;
      byKey = keyed(next);
      for (const listener of listeners) listener(previous, next);
    },
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

/** Each listed source's current commit, in order. */
export function listedOf(state: CatalogState): Namespace[] {
  return state.sources.flatMap((source) => (source.listed === false ? [] : [source.current]));
}

function keyed(state: CatalogState): Map<string, Namespace> {
  const map = new Map<string, Namespace>();
  for (const source of state.sources) {
    for (const ns of [source.current, ...source.retained]) map.set(`${ns.source}@${ns.commit}`, ns);
  }
  return map;
}

/** True when what clients list changed between two states: a source's current commit, or the set of sources. */
export function listingChanged(previous: CatalogState, next: CatalogState): boolean {
  if (previous.sources.length !== next.sources.length) return true;
  return previous.sources.some(
    (source, index) =>
      source.current !== next.sources[index]!.current || source.listed !== next.sources[index]!.listed,
  );
}
