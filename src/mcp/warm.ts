import { setImmediate as nextTurn } from 'node:timers/promises';
import { type Catalog, type CatalogState, EVERY_SOURCE, type Namespace } from '../catalog/index.ts';
import { giveBackMemory } from '../shared/heapGrowth.ts';
import { PAGE_TEXT_BYTES, type ServingOwner, type ServingState } from './serving.ts';

/** What is being made ready to serve at full speed, and how to stop following the catalog. */
export interface Warming {
  /**
   * Source ids of listed namespaces whose snapshot or search index is not ready yet; with none, and `settled`, the
   * full listing is made ready first (once per listing). Before a start's first full listing, while the memory the
   * start let go is given back (once, and only where `giveBack` says), every listed source's.
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

/** Whether, and how, a start gives back what it let go once it is done (shared/heapGrowth.ts). */
export interface GiveBack {
  /** From how many listed skills: a small start leaves little, and a collection is not free. */
  atSkills: number;
  collect(): Promise<void>;
}

/**
 * From 10,000 skills. At 1,000 repositories of 100 skills a warm restart said ready at 437–444 MiB RSS, 60–70 of
 * them what its git processes and index files had left (the memory reducer gave them back ten seconds later); with
 * the collection, 371–378 MiB (heap 194–224 → 134 MiB). It takes about 0.2 s there.
 */
export const GIVE_BACK: GiveBack = { atSkills: 10_000, collect: giveBackMemory };

/**
 * Makes every listed namespace ready as soon as it is published: its snapshot (what listings answer from) and its
 * search index (read from dataDir, or built yielding the thread); then, once every namespace is and `settled` says
 * no more are coming (the sources' first syncs are done), the full listing: its view and its first pages' texts.
 * Until then it is pending, so readiness means listings and searches answer at full speed. The listing is not made for each source
 * that lands at a start: a thousand sources would build it a thousand times, growing. Nothing is made before
 * `after` resolves (a stdio host's first answer: a listing asked before then makes its own pages). Before the start's
 * full listing is made, the memory the start let go is given back (`giveBack`): its texts are not collected with it,
 * and nothing says ready until both are done.
 */
export function warmCatalog(
  catalog: Catalog,
  serving: ServingOwner,
  settled: () => boolean = () => true,
  after: Promise<unknown> = Promise.resolve(),
  giveBack: GiveBack = GIVE_BACK,
): Warming {
  const waiting = new Set<Namespace>();
  const warmed = new WeakSet<Namespace>();
  let turns: Promise<unknown> = after;
  // The catalog state whose full listing is ready (a swap that lists the same namespaces keeps it: serving.ts).
  let listedAt: CatalogState | undefined;
  // The start's memory given back: under way (a promise), or done (asked for once, whatever the catalog's size);
  // the listing is made once it is.
  let givingBack: Promise<void> | undefined;
  let givenBack = false;
  const listing = () => {
    if (waiting.size > 0 || !settled() || listedAt === catalog.state || givingBack !== undefined) return;
    if (!givenBack) {
      givenBack = true;
      const skills = catalog.listed().reduce((sum, ns) => sum + ns.skills.length, 0);
      if (skills >= giveBack.atSkills) {
        givingBack = giveBack.collect().finally(() => {
          givingBack = undefined;
          listing();
        });
        return;
      }
    }
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
      if (givingBack !== undefined) return catalog.listed().map((ns) => ns.source);
      return [...waiting].map((ns) => ns.source);
    },
    stop() {
      waiting.clear();
      unsubscribe();
    },
  };
}
