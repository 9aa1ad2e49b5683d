import type { Resource } from '@modelcontextprotocol/server';
import type { CatalogReader, CatalogState } from '../catalog/index.ts';
import { compareText } from '../shared/text.ts';
import { snapshotOf, type ServedSkill, type Snapshot } from './snapshot.ts';

/** What every request answers from, for one catalog state: built once per swap. */
export interface CatalogView {
  readonly state: CatalogState;
  /** Skills of each source's current commit, sorted by URI. */
  readonly listed: readonly ServedSkill[];
  /** Their SKILL.md files, as resources/list shows them. */
  readonly resources: readonly Resource[];
  /** Skill name → listed skills of that name, in configuration order. */
  readonly named: ReadonlyMap<string, readonly ServedSkill[]>;
  /** Prompt name → skill, in listing order. */
  readonly prompts: ReadonlyMap<string, ServedSkill>;
}

const views = new WeakMap<CatalogState, CatalogView>();

/** The view of the catalog's current state. */
export function viewOf(catalog: CatalogReader): CatalogView {
  const state = catalog.state;
  let view = views.get(state);
  if (view === undefined) views.set(state, (view = buildView(catalog)));
  return view;
}

/** The snapshot of `source` at `commit` (current or retained), if it is served. */
export function snapshotAt(catalog: CatalogReader, source: string, commit: string): Snapshot | undefined {
  const ns = catalog.namespace(source, commit);
  return ns === undefined ? undefined : snapshotOf(ns);
}

function buildView(catalog: CatalogReader): CatalogView {
  const inConfigOrder = catalog.listed().flatMap((ns) => snapshotOf(ns).ordered);
  const named = new Map<string, ServedSkill[]>();
  for (const served of inConfigOrder) {
    const same = named.get(served.skill.name);
    if (same === undefined) named.set(served.skill.name, [served]);
    else same.push(served);
  }
  const listed = [...inConfigOrder].sort((a, b) => compareText(a.uri, b.uri));
  return {
    state: catalog.state,
    listed,
    resources: listed.map((served) => served.listed),
    named,
    prompts: promptNames(listed),
  };
}

/**
 * One prompt per listed skill. Names stay unique across sources: a skill's name alone when no other listed
 * skill has it, `<source>/<name>` when another source has it too, `<source>/<served path>` when even that repeats.
 */
function promptNames(listed: readonly ServedSkill[]): Map<string, ServedSkill> {
  const count = (key: (served: ServedSkill) => string) => {
    const counts = new Map<string, number>();
    for (const served of listed) counts.set(key(served), (counts.get(key(served)) ?? 0) + 1);
    return counts;
  };
  const byName = count((served) => served.skill.name);
  const bySourceName = count((served) => `${served.ns.source}/${served.skill.name}`);
  const names = new Map<string, ServedSkill>();
  for (const served of listed) {
    const qualified = `${served.ns.source}/${served.skill.name}`;
    const name =
      byName.get(served.skill.name) === 1
        ? served.skill.name
        : bySourceName.get(qualified) === 1
          ? qualified
          : `${served.ns.source}/${served.skill.servedDir}`;
    names.set(name, served);
  }
  return names;
}
