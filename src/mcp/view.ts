import type { Resource } from '@modelcontextprotocol/server';
import type { Namespace } from '../catalog/index.ts';
import { compareText } from '../shared/text.ts';
import type { ServedSkill, Snapshot } from './snapshot.ts';

/** The listing one caller is served at one catalog state (serving.ts keeps it). */
export interface CatalogView {
  /** Skills of each source's current commit, sorted by URI. */
  readonly listed: readonly ServedSkill[];
  /** Their SKILL.md files, as resources/list shows them. */
  readonly resources: readonly Resource[];
  /** Skill name → listed skills of that name, in configuration order. */
  readonly named: ReadonlyMap<string, readonly ServedSkill[]>;
  /** Prompt name → skill, in listing order. */
  readonly prompts: ReadonlyMap<string, ServedSkill>;
}

/**
 * The listing of `namespaces` (listed, in configuration order), from their snapshots. The skills sorted are made
 * at once; the names and prompts at their first use, and the resources at each (a resources/list, rare, of
 * objects a listing never needs).
 */
export function buildView(
  namespaces: readonly Namespace[],
  snapshotOf: (ns: Namespace) => Snapshot,
): CatalogView {
  const snapshots = namespaces.map(snapshotOf);
  const inConfigOrder = snapshots.flatMap((snapshot) => snapshot.ordered);
  const listed = joinedByUri(snapshots);
  let named: Map<string, ServedSkill[]> | undefined;
  let prompts: Map<string, ServedSkill> | undefined;
  return {
    listed,
    get resources() {
      return listed.map((served) => served.listed);
    },
    get named() {
      if (named === undefined) {
        named = new Map();
        for (const served of inConfigOrder) {
          const same = named.get(served.skill.name);
          if (same === undefined) named.set(served.skill.name, [served]);
          else same.push(served);
        }
      }
      return named;
    },
    get prompts() {
      return (prompts ??= promptNames(listed));
    },
  };
}

/**
 * The skills of `snapshots` sorted by URI, as `byUri` sorts them, without making a URI: each snapshot's are sorted
 * already, and every URI of a namespace starts with the namespace's URI and a slash (`skill://<source>/<commit>/`),
 * which is never the start of another namespace's (a source id holds no slash, a commit is a fixed length of hex). So
 * the namespaces' skills do not interleave: they are joined in the order of their namespaces' URIs. At 100,000
 * skills, sorting them made 100,000 URIs and 30 MiB that a start left for the collector as it said ready.
 */
function joinedByUri(snapshots: readonly Snapshot[]): ServedSkill[] {
  const runs = snapshots.map((snapshot) => ({ prefix: `${snapshot.uri}/`, skills: snapshot.ordered }));
  runs.sort((a, b) => compareText(a.prefix, b.prefix));
  return runs.flatMap((run) => run.skills);
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
