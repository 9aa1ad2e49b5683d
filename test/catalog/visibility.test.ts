import { describe, expect, it } from 'vitest';
import {
  type CatalogState,
  createCatalog,
  EVERY_SOURCE,
  type Namespace,
  onlySources,
  visibleCatalog,
  visibleState,
} from '../../src/catalog/index.ts';
import { createServingOwner } from '../../src/mcp/serving.ts';
import { namespaceOf } from '../helpers/catalog.ts';
import { fixture } from '../helpers/fixtures.ts';

const catalogRepo = fixture('catalog');
const c1 = catalogRepo.commits['c1']!;
const c2 = catalogRepo.commits['c2']!;

const stateOf = (...namespaces: Namespace[]): CatalogState => ({
  sources: namespaces.map((ns) => ({ id: ns.source, current: ns, retained: [] })),
  failures: [{ id: 'b', reason: 'source-timeout', detail: 'b timed out' }],
});

describe('what a caller sees of the catalog', () => {
  it('names a set of sources by one key, whatever the order', () => {
    expect(onlySources(['b', 'a', 'b']).key).toBe('a,b');
    expect(onlySources([]).key).toBe('');
    expect([EVERY_SOURCE.key, EVERY_SOURCE.has('anything')]).toEqual(['*', true]);
  });

  it('keeps its sources and their failures', async () => {
    const a = await namespaceOf('a', catalogRepo.gitdir, c1, ['skills']);
    const b = await namespaceOf('b', catalogRepo.gitdir, c2, ['skills']);
    const state = stateOf(a, b);
    const onlyA = visibleState(state, onlySources(['a']));
    expect([onlyA.sources.map((s) => s.id), onlyA.failures]).toEqual([['a'], []]);
    expect(visibleState(state, onlySources(['b'])).failures).toEqual(state.failures);
    // Hiding nothing of this state: the state itself.
    expect(visibleState(state, onlySources(['a', 'b', 'c']))).toBe(state);
    expect(visibleState(state, EVERY_SOURCE)).toBe(state);
  });

  it('hides a source from namespaces, the listing and the view, and follows swaps', async () => {
    const a = await namespaceOf('a', catalogRepo.gitdir, c1, ['skills']);
    const b = await namespaceOf('b', catalogRepo.gitdir, c2, ['skills']);
    const catalog = createCatalog(stateOf(a, b));
    const seen = visibleCatalog(catalog, onlySources(['a']));
    expect([seen.namespace('a', c1), seen.namespace('b', c2)]).toEqual([a, undefined]);
    expect(seen.listed()).toEqual([a]);
    const owner = createServingOwner(catalog);
    const view = owner.at(onlySources(['a']));
    // Another request of a caller with the same sources finds the same serving state: no per-request work.
    expect(owner.at(onlySources(['a']))).toBe(view);
    expect(view.listed.every((served) => served.ns === a)).toBe(true);
    expect([view.namespace('a', c1), view.namespace('b', c2)]).toEqual([a, undefined]);
    expect(owner.at(onlySources(['a', 'b'])).listed).toEqual(owner.at(EVERY_SOURCE).listed);

    const changes: Array<[string[], string[]]> = [];
    seen.onChange((previous, next) =>
      changes.push([
        previous.sources.map((s) => s.current.commit),
        next.sources.map((s) => s.current.commit),
      ]),
    );
    const a2 = await namespaceOf('a', catalogRepo.gitdir, c2, ['skills']);
    catalog.swap(stateOf(a2, b));
    expect(seen.listed()).toEqual([a2]);
    expect(owner.at(onlySources(['a']))).not.toBe(view);
    expect(changes).toEqual([[[c1], [c2]]]);
  });

  it('shows the refs of a refs: source to a caller who sees that source, and to no other', async () => {
    const v1 = await namespaceOf('policies.v1', catalogRepo.gitdir, c1, ['skills']);
    const other = await namespaceOf('policies-eu', catalogRepo.gitdir, c2, ['skills']);
    const state: CatalogState = {
      sources: [
        { id: 'policies.v1', group: 'policies', current: v1, retained: [], listed: false },
        { id: 'policies-eu', current: other, retained: [] },
      ],
      failures: [{ id: 'policies.v2', group: 'policies', reason: 'source-timeout', detail: 'v2 timed out' }],
    };
    const seen = visibleState(state, onlySources(['policies']));
    expect([seen.sources.map((s) => s.id), seen.failures.map((f) => f.id)]).toEqual([
      ['policies.v1'],
      ['policies.v2'],
    ]);
    const catalog = createCatalog(state);
    expect(visibleCatalog(catalog, onlySources(['policies'])).namespace('policies.v1', c1)).toBe(v1);
    expect(visibleCatalog(catalog, onlySources(['policies'])).listed()).toEqual([]);
    expect(
      visibleCatalog(catalog, onlySources(['policies-eu'])).namespace('policies.v1', c1),
    ).toBeUndefined();
  });
});
