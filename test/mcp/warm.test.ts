import { describe, expect, it } from 'vitest';
import { buildNamespace, createCatalog, EVERY_SOURCE, type Namespace } from '../../src/catalog/index.ts';
import { PostingsBuilder } from '../../src/index/postings.ts';
import type { SearchData } from '../../src/index/searchBuild.ts';
import { createServingOwner, type ServingOwner, type ServingState } from '../../src/mcp/serving.ts';
import { warmCatalog } from '../../src/mcp/warm.ts';
import { giveBackMemory } from '../../src/shared/heapGrowth.ts';
import { commitIndexOf, oneFileSkill } from '../helpers/catalog.ts';

/** A namespace of one skill whose search index is ready when the test says so. */
function namespaceWaiting(source: string) {
  let ready!: (data: SearchData) => void;
  const searchData = new Promise<SearchData>((resolve) => (ready = resolve));
  const ns = buildNamespace(
    source,
    commitIndexOf([oneFileSkill('alpha', 'Rotates keys.')]),
    { repository: 'local:test' },
    async () => new Uint8Array(),
    undefined,
    () => searchData,
  );
  const builder = new PostingsBuilder();
  builder.add(0, new Map([['alpha', 1]]));
  return { ns, ready: () => ready({ postings: builder.done(), unread: 0, cut: 0, stored: true }) };
}

const served = (...namespaces: Namespace[]) => ({
  sources: namespaces.map((ns) => ({ id: ns.source, current: ns, retained: [] })),
  failures: [],
});

/** `owner`, recording the cursors of the pages warming cuts (`asked`) and writes as text (`written`). */
function recorded(owner: ServingOwner) {
  const asked: Array<string | undefined> = [];
  const written: Array<string | undefined> = [];
  const recording: ServingOwner = {
    ...owner,
    at(visibility) {
      const state = owner.at(visibility);
      return Object.assign(Object.create(state) as ServingState, {
        listing(cursor: string | undefined) {
          asked.push(cursor);
          return state.listing(cursor);
        },
        listingText(cursor: string | undefined) {
          written.push(cursor);
          return state.listingText(cursor);
        },
      });
    },
  };
  return { recording, asked, written };
}

describe('warming the catalog', () => {
  it('holds each listed namespace pending until its search index is ready, one published later too', async () => {
    const one = namespaceWaiting('one');
    const two = namespaceWaiting('two');
    const catalog = createCatalog(served(one.ns));
    const owner = createServingOwner(catalog);
    const warming = warmCatalog(catalog, owner);
    try {
      expect(warming.pending()).toEqual(['one']);
      catalog.swap(served(one.ns, two.ns));
      expect(warming.pending()).toEqual(['one', 'two']);
      one.ready();
      await expect.poll(() => warming.pending()).toEqual(['two']);
      expect(owner.searchStats(one.ns)).toMatchObject({ stored: true, skills: 1 });
      two.ready();
      await expect.poll(() => warming.pending()).toEqual([]);
      // A namespace no longer listed is no longer waited for.
      const three = namespaceWaiting('three');
      catalog.swap(served(three.ns));
      expect(warming.pending()).toEqual(['three']);
      catalog.swap(served());
      expect(warming.pending()).toEqual([]);
    } finally {
      warming.stop();
    }
  });

  it("writes the listing's pages as text once the last namespace is ready and no more are coming, before any caller asks", async () => {
    const one = namespaceWaiting('one');
    const two = namespaceWaiting('two');
    const catalog = createCatalog(served(one.ns, two.ns));
    const owner = createServingOwner(catalog, { pageSize: 1 });
    // What warming asks of the listing, recorded: pages cut (none: each request cuts its own), pages written as text.
    const { recording, asked, written } = recorded(owner);
    // The sources' first syncs are running: more namespaces may come.
    let settled = false;
    const warming = warmCatalog(catalog, recording, () => settled);
    try {
      one.ready();
      two.ready();
      await expect.poll(() => warming.pending()).toEqual([]);
      expect([asked, written]).toEqual([[], []]);
      settled = true;
      expect(warming.pending()).toEqual([]);
      const first = owner.at(EVERY_SOURCE).listing(undefined);
      // Every page is written as text (the texts fit): a first listing answers from bytes, as a later one does.
      expect([asked, written]).toEqual([[], [undefined, first.nextCursor]]);
      const text = owner.at(EVERY_SOURCE).listingText(undefined);
      // Asked again with nothing swapped in: nothing is written again.
      expect(warming.pending()).toEqual([]);
      expect(written.length).toBe(2);
      // A swap that lists the same namespaces: the listing is made ready again from the texts kept.
      catalog.swap({
        ...served(one.ns, two.ns),
        failures: [{ id: 'gone', reason: 'source-fetch-failed', detail: 'x' }],
      });
      expect(warming.pending()).toEqual([]);
      expect(written.length).toBe(4);
      expect(owner.at(EVERY_SOURCE).listingText(undefined)).toBe(text);
      expect(first.skills.map((skill) => skill.uri.split('/')[2])).toEqual(['one']);
    } finally {
      warming.stop();
    }
  });

  it("gives back the start's memory once, before its full listing, and is ready only when both are done", async () => {
    const one = namespaceWaiting('one');
    const two = namespaceWaiting('two');
    const catalog = createCatalog(served(one.ns, two.ns));
    const owner = createServingOwner(catalog);
    const { recording, written } = recorded(owner);
    const collections: Array<() => void> = [];
    const collect = () => new Promise<void>((resolve) => collections.push(resolve));
    let settled = false;
    const warming = warmCatalog(catalog, recording, () => settled, undefined, { atSkills: 2, collect });
    try {
      one.ready();
      two.ready();
      await expect.poll(() => warming.pending()).toEqual([]);
      // Not before the start's syncs are done: more namespaces may come.
      expect(collections).toHaveLength(0);
      settled = true;
      // Every listed source waits for it, and the listing is not written yet (its texts are not what is let go).
      expect(warming.pending()).toEqual(['one', 'two']);
      expect(collections).toHaveLength(1);
      expect(warming.pending()).toEqual(['one', 'two']);
      expect(written).toEqual([]);
      collections[0]!();
      await expect.poll(() => warming.pending()).toEqual([]);
      expect(written).toEqual([undefined]);
      // Once a start: a listing made again (another catalog state) collects nothing.
      catalog.swap({
        ...served(one.ns, two.ns),
        failures: [{ id: 'gone', reason: 'source-fetch-failed', detail: 'x' }],
      });
      expect(warming.pending()).toEqual([]);
      expect(collections).toHaveLength(1);
      expect(written).toEqual([undefined, undefined]);
    } finally {
      warming.stop();
    }
  });

  it('gives back nothing after a start of fewer skills than it is asked for at', async () => {
    const one = namespaceWaiting('one');
    const catalog = createCatalog(served(one.ns));
    let collected = 0;
    const warming = warmCatalog(catalog, createServingOwner(catalog), undefined, undefined, {
      atSkills: 2,
      collect: async () => void collected++,
    });
    try {
      one.ready();
      await expect.poll(() => warming.pending()).toEqual([]);
      expect(collected).toBe(0);
    } finally {
      warming.stop();
    }
  });
});

describe('giving memory back', () => {
  it('collects what is no longer held, and gives the heap back to the system', async () => {
    // About 100 MiB of objects, let go.
    let held: Array<{ at: number; text: string }> | undefined = Array.from(
      { length: 1_000_000 },
      (_, at) => ({
        at,
        text: `item ${at}`,
      }),
    );
    expect(held).toHaveLength(1_000_000);
    held = undefined;
    const before = process.memoryUsage().heapTotal;
    await giveBackMemory();
    const after = process.memoryUsage().heapTotal;
    expect(before - after).toBeGreaterThan(32 * 2 ** 20);
  });
});
