import { setImmediate as nextTurn } from 'node:timers/promises';
import { type Catalog, EVERY_SOURCE, type Namespace } from '../catalog/index.ts';
import type { ServingOwner, ServingState } from './serving.ts';

/** What is being made ready to serve at full speed, and how to stop following the catalog. */
export interface Warming {
  /** Source ids of listed namespaces whose snapshot or search index is not ready yet. */
  pending(): string[];
  stop(): void;
}

/** Every page of `serving`'s listing, cut (each is kept: serving.ts). */
function cutPages(serving: ServingState): void {
  let page = serving.listing(undefined);
  while (page.nextCursor !== undefined) page = serving.listing(page.nextCursor);
}

/**
 * Makes every listed namespace ready as soon as it is published: its snapshot (what listings
 * answer from), then the catalog's view, and its search index (read from dataDir, or built yielding the thread). Until then it is pending,
 * so readiness means listings and searches answer at full speed.
 */
export function warmCatalog(catalog: Catalog, serving: ServingOwner): Warming {
  const waiting = new Set<Namespace>();
  const warmed = new WeakSet<Namespace>();
  let turns: Promise<unknown> = Promise.resolve();
  const warm = async (ns: Namespace) => {
    // One snapshot a turn, in turn: a thousand namespaces published at once do not hold the thread together.
    await (turns = turns.then(() => nextTurn()));
    if (!waiting.has(ns)) return;
    // A failed build is tried again by the next search; it no longer holds readiness.
    await serving.prepare(ns).catch(() => undefined);
    warmed.add(ns);
    waiting.delete(ns);
    // The last one ready: the listing every caller who sees all sources answers from (URI order, prompt names), and
    // its pages, cut.
    if (waiting.size === 0) cutPages(serving.at(EVERY_SOURCE));
  };
  const follow = () => {
    const listed = new Set(catalog.listed());
    for (const ns of waiting) if (!listed.has(ns)) waiting.delete(ns);
    for (const ns of listed)
      if (!warmed.has(ns) && !waiting.has(ns)) {
        waiting.add(ns);
        void warm(ns);
      }
  };
  const unsubscribe = catalog.onChange(follow);
  follow();
  return {
    pending: () => [...waiting].map((ns) => ns.source),
    stop() {
      waiting.clear();
      unsubscribe();
    },
  };
}
