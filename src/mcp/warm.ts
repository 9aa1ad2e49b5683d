import { setImmediate as nextTurn } from 'node:timers/promises';
import { type Catalog, type CatalogState, EVERY_SOURCE, type Namespace } from '../catalog/index.ts';
import { PAGE_TEXT_BYTES, type ServingOwner, type ServingState } from './serving.ts';

/** What is being made ready to serve at full speed, and how to stop following the catalog. */
export interface Warming {
  /**
   * Source ids of listed namespaces whose snapshot or search index is not ready yet; with none, and `settled`, the
   * full listing is made ready first (once per listing).
   */
  pending(): string[];
  stop(): void;
}

/**
 * The pages of `serving`'s listing written as text from the first while the texts fit in half of what the owner keeps
 * (PAGE_TEXT_BYTES): a first listing answers as fast as a later one. Texts written already are taken as they are, so
 * a listing made ready again (a swap that lists the same namespaces) costs nothing; nothing is kept of a page past
 * them (each request cuts its own: serving.ts).
 */
function writePages(serving: ServingState): void {
  let written = 0;
  let cursor: string | undefined;
  do {
    const text = serving.listingText(cursor);
    written += text.entries.byteLength + text.meta.byteLength;
    cursor = text.nextCursor;
  } while (cursor !== undefined && written < PAGE_TEXT_BYTES / 2);
}

/**
 * Makes every listed namespace ready as soon as it is published: its snapshot (what listings answer from) and its
 * search index (read from dataDir, or built yielding the thread); then, once every namespace is and `settled` says
 * no more are coming (the sources' first syncs are done), the full listing: its view and its first pages' texts.
 * Until then it is pending, so readiness means listings and searches answer at full speed. The listing is not made for each source
 * that lands at a start: a thousand sources would build it a thousand times, growing. Nothing is made before
 * `after` resolves (a stdio host's first answer: a listing asked before then makes its own pages).
 */
export function warmCatalog(
  catalog: Catalog,
  serving: ServingOwner,
  settled: () => boolean = () => true,
  after: Promise<unknown> = Promise.resolve(),
): Warming {
  const waiting = new Set<Namespace>();
  const warmed = new WeakSet<Namespace>();
  let turns: Promise<unknown> = after;
  // The catalog state whose full listing is ready (a swap that lists the same namespaces keeps it: serving.ts).
  let listedAt: CatalogState | undefined;
  const listing = () => {
    if (waiting.size > 0 || !settled() || listedAt === catalog.state) return;
    // The listing every caller who sees all sources answers from (URI order), its first pages written.
    writePages(serving.at(EVERY_SOURCE));
    listedAt = catalog.state;
  };
  const warm = async (ns: Namespace) => {
    // One snapshot a turn, in turn: a thousand namespaces published at once do not hold the thread together.
    await (turns = turns.then(() => nextTurn()));
    if (!waiting.has(ns)) return;
    // A failed build is tried again by the next search; it no longer holds readiness.
    await serving.prepare(ns).catch(() => undefined);
    warmed.add(ns);
    waiting.delete(ns);
    listing();
  };
  const follow = () => {
    const listed = new Set(catalog.listed());
    for (const ns of waiting) if (!listed.has(ns)) waiting.delete(ns);
    for (const ns of listed)
      if (!warmed.has(ns) && !waiting.has(ns)) {
        waiting.add(ns);
        void warm(ns);
      }
    listing();
  };
  const unsubscribe = catalog.onChange(follow);
  follow();
  return {
    pending() {
      // A start whose last sync swapped nothing in: the listing is made now, before anyone is told it is ready.
      listing();
      return [...waiting].map((ns) => ns.source);
    },
    stop() {
      waiting.clear();
      unsubscribe();
    },
  };
}
