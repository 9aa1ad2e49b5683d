import { describe, expect, it } from 'vitest';
import { QUERIES, realisticCatalog } from '../../bench/searchCatalog.ts';
import { MEASURE, TUNE } from '../../bench/searchQueries.ts';
import { buildNamespace } from '../../src/catalog/index.ts';
import { rankAcross, rankTop } from '../../src/mcp/ranking.ts';
import { buildSkillIndex, parseQuery, type SearchHit, type SkillIndex } from '../../src/mcp/search.ts';
import { buildSnapshot } from '../../src/mcp/snapshot.ts';
import { commitIndexOf, oneFileSkill } from '../helpers/catalog.ts';

/**
 * bench/search.ts's realistic catalog served as 7 namespaces, three of them holding the same skills again (equal
 * scores, ordered by URI), and a skill named only by function words (an exact name that matches no term).
 */
async function indexes(): Promise<SkillIndex[]> {
  const catalog = realisticCatalog();
  const parts = Array.from({ length: 4 }, (_, part) => catalog.filter((_, i) => i % 4 === part));
  const built: SkillIndex[] = [];
  for (const [n, skills] of [
    ...parts,
    parts[0]!,
    parts[1]!,
    [...parts[2]!, { name: 'do-it', description: 'It.', body: '' }],
  ].entries()) {
    const bodies = new Map<string, string>();
    const indexed = skills.map((skill, i) => {
      const blob = (n * 1000 + i).toString(16).padStart(40, '0');
      bodies.set(blob, skill.body);
      return oneFileSkill(skill.name, skill.description, { blob, size: 1 });
    });
    const ns = buildNamespace(
      `ns${n}`,
      commitIndexOf(indexed),
      { repository: 'local:test' },
      async () => new Uint8Array(),
      (blob) => bodies.get(blob),
    );
    built.push(await buildSkillIndex(ns, buildSnapshot(ns).ordered));
  }
  return built;
}

const shown = (hits: readonly SearchHit[]) =>
  hits.map((hit) => [hit.served.uri, hit.score, hit.matched()] as const);

describe('rankTop', () => {
  it('is the first limit hits of rankAcross and its count, for every query of the search benches, to the last bit', async () => {
    const all = await indexes();
    const queries = [
      ...QUERIES.map((q) => q.query),
      ...MEASURE.map((q) => q.query),
      ...TUNE.map((q) => q.query),
      'do it',
      'the of and',
      '',
    ];
    let compared = 0;
    for (const query of queries)
      for (const searched of [all, all.slice(0, 1)])
        for (const limit of [0, 1, 3, 10, 50]) {
          const full = rankAcross(searched, parseQuery(query));
          const top = rankTop(searched, parseQuery(query), limit);
          expect(top.total).toBe(full.length);
          expect(shown(top.hits)).toEqual(shown(full.slice(0, limit)));
          compared++;
        }
    expect(compared).toBe(queries.length * 10);
    // Ties at the cut are ordered by URI: the same skill of ns0 and ns4 scores alike.
    const tied = rankAcross(all, parseQuery('pdf form'));
    expect(tied.filter((hit) => hit.score === tied[0]!.score).map((hit) => hit.served.ns.source)).toEqual([
      'ns0',
      'ns4',
    ]);
  });
});
