import type { Namespace } from '../../src/catalog/index.ts';
import { loadSkillIndex, type SearchHit, type SkillIndex, searchIndexes } from '../../src/mcp/search.ts';
import { buildSnapshot } from '../../src/mcp/snapshot.ts';

// Each namespace's index loaded (or built) once, as a served catalog state keeps it (serving.ts).
const indexes = new WeakMap<Namespace, Promise<SkillIndex>>();

/** The skills of namespaces outside any catalog matching `query`, best first across them. */
export async function searchNamespaces(
  namespaces: readonly Namespace[],
  query: string,
  groups?: ReadonlyMap<string, string>,
): Promise<SearchHit[]> {
  const indexOf = (ns: Namespace) => {
    let index = indexes.get(ns);
    if (index === undefined) indexes.set(ns, (index = loadSkillIndex(ns, buildSnapshot(ns))));
    return index;
  };
  return searchIndexes(await Promise.all(namespaces.map(indexOf)), query, groups);
}
