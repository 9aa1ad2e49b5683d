import { compareText } from '../shared/text.ts';
import { type CatalogReader, type CatalogState, listedOf } from './catalog.ts';

/** The sources one caller may see. Equal sets have equal keys: what is served is kept per (catalog state, key). */
export interface Visibility {
  readonly key: string;
  /** Every source, whatever the config holds (stdio, or HTTP without auth). */
  readonly all: boolean;
  has(source: string): boolean;
}

export const EVERY_SOURCE: Visibility = Object.freeze({ key: '*', all: true, has: () => true });

/** Exactly these sources. Ids are reg-names (no `,` or `*`), so the key names the set unambiguously. */
export function onlySources(ids: Iterable<string>): Visibility {
  const set = new Set(ids);
  return Object.freeze({
    key: [...set].sort(compareText).join(','),
    all: false,
    has: (source: string) => set.has(source),
  });
}

/** Whether a caller sees a source: by its id, or, for a ref of a `refs:` source, by that source's id. */
const sees = (visibility: Visibility, source: { readonly id: string; readonly group?: string }) =>
  visibility.has(source.id) || (source.group !== undefined && visibility.has(source.group));

/** Anything that lists sources and failures by source id (and a ref by its `refs:` source): a catalog state, a status report. */
interface BySource {
  readonly sources: readonly { readonly id: string; readonly group?: string }[];
  readonly failures: readonly { readonly id: string; readonly group?: string }[];
}

/** The sources of `report` a caller may see, and their failures; the report itself when nothing is hidden. */
export function visibleSources<T extends BySource>(report: T, visibility: Visibility): T {
  if (visibility.all) return report;
  const sources = report.sources.filter((source) => sees(visibility, source));
  const failures = report.failures.filter((failure) => sees(visibility, failure));
  return sources.length === report.sources.length && failures.length === report.failures.length
    ? report
    : { ...report, sources, failures };
}

/** The part of `state` a caller sees: its sources and their failures; the state itself when nothing is hidden. */
export const visibleState = (state: CatalogState, visibility: Visibility): CatalogState =>
  visibleSources(state, visibility);

/** Whether two states a caller sees hold the same sources and failures (the same objects, in the same order). */
const sameSeen = (a: CatalogState, b: CatalogState) =>
  a === b ||
  (a.sources.length === b.sources.length &&
    a.failures.length === b.failures.length &&
    a.sources.every((source, i) => source === b.sources[i]) &&
    a.failures.every((failure, i) => failure === b.failures[i]));

/**
 * The catalog as one caller sees it: a source it may not see is absent everywhere (state, namespaces, listing,
 * changes), exactly as a source that is not configured. It follows every swap of `catalog`.
 */
export function visibleCatalog(catalog: CatalogReader, visibility: Visibility): CatalogReader {
  if (visibility.all) return catalog;
  const state = () => visibleState(catalog.state, visibility);
  return {
    get state() {
      return state();
    },
    namespace: (source, commit) =>
      visibility.has(source) || state().sources.some((served) => served.id === source)
        ? catalog.namespace(source, commit)
        : undefined,
    listed: () => listedOf(state()),
    onChange: (listener) =>
      catalog.onChange((previous, next) => {
        const before = visibleState(previous, visibility);
        const after = visibleState(next, visibility);
        if (!sameSeen(before, after)) listener(before, after);
      }),
  };
}
