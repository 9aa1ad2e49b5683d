import { type CatalogReader, visibleCatalog, type Visibility } from '../catalog/index.ts';
import { MAX_SEARCH_QUERY_CHARS } from '../mcp/budget.ts';
import type { ServingOwner } from '../mcp/serving.ts';
import type { CommitStatus, StatusReport } from '../shared/status.ts';
import type { PageSearch } from './statusPage.ts';

/** Results the status page shows for a query. */
export const PAGE_SEARCH_RESULTS = 20;

/** The report with each served commit's search index figures, where the index is built. */
export function withSearchStats(report: StatusReport, serving: ServingOwner): StatusReport {
  const withStats = (source: string, status: CommitStatus): CommitStatus => {
    const ns = serving.catalog.namespace(source, status.commit);
    const search = ns === undefined ? undefined : serving.searchStats(ns);
    return search === undefined ? status : { ...status, search };
  };
  return {
    ...report,
    sources: report.sources.map((source) => ({
      ...source,
      current: source.current === null ? null : withStats(source.id, source.current),
      retained: source.retained.map((status) => withStats(source.id, status)),
    })),
  };
}

/** `GET /?q=`: the listed skills the caller may see, best first, as skill_search ranks them. */
export async function pageSearch(
  serving: ServingOwner,
  visibility: Visibility,
  query: string,
): Promise<PageSearch> {
  const bounded = query.slice(0, MAX_SEARCH_QUERY_CHARS);
  const state = serving.at(visibility);
  const { hits, total } = await state.searchTop(state.namespaces, bounded, PAGE_SEARCH_RESULTS);
  return {
    query: bounded,
    results: hits.map(({ served }) => ({
      uri: served.uri,
      name: served.skill.name,
      description: served.description,
      source: served.ns.source,
    })),
    total,
  };
}

/** The names of the skills each source lists, as the caller may see them: the status page shows them per source. */
export function listedSkillNames(catalog: CatalogReader, visibility: Visibility): Map<string, string[]> {
  return new Map(
    visibleCatalog(catalog, visibility)
      .listed()
      .map((ns) => [ns.source, ns.skills.map((skill) => skill.name).sort()]),
  );
}
