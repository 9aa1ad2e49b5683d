/** The peer both search benches measure against: BM25 over name and description alone (MiniSearch, skill_search's terms). */
import MiniSearch from 'minisearch';
import { searchTerms } from '../src/mcp/search.ts';
import type { ServedSkill } from '../src/mcp/snapshot.ts';

/** A ranking of skill names for a query. */
export type Ranker = (query: string) => Promise<string[]> | string[];

export function nameAndDescription(skills: readonly ServedSkill[]): Ranker {
  const index = new MiniSearch({
    fields: ['name', 'description'],
    tokenize: (text) => [...new Set(searchTerms(text))],
    processTerm: (term) => term,
  });
  index.addAll(skills.map((s, id) => ({ id, name: s.skill.name, description: s.description })));
  return (query) => index.search(query).map((r) => skills[r.id as number]!.skill.name);
}
