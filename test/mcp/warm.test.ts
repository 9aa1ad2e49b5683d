import { describe, expect, it } from 'vitest';
import { buildNamespace, createCatalog, type Namespace } from '../../src/catalog/index.ts';
import { PostingsBuilder } from '../../src/index/postings.ts';
import type { SearchData } from '../../src/index/searchBuild.ts';
import { createServingOwner } from '../../src/mcp/serving.ts';
import { warmCatalog } from '../../src/mcp/warm.ts';
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
});
