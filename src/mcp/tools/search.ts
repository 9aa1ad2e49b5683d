import type { McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { CatalogReader, Namespace } from '../../catalog/index.ts';
import {
  DEFAULT_SEARCH_LIMIT,
  LIST_PAGE_CHARS,
  MAX_SEARCH_LIMIT,
  MAX_SEARCH_QUERY_CHARS,
  SEARCH_LINE_DESCRIPTION_CHARS,
} from '../budget.ts';
import type { SearchHit } from '../search.ts';
import { failure, READ_ONLY, searchModule, type ToolDeps } from './common.ts';
import { oneLine } from '../../shared/text.ts';

const inputSchema = z.object({
  query: z
    .string()
    .min(1)
    .max(MAX_SEARCH_QUERY_CHARS)
    .describe('the task in your own words, e.g. "fill in the fields of a PDF form"'),
  limit: z
    .number()
    .int()
    .min(1)
    .max(MAX_SEARCH_LIMIT)
    .optional()
    .describe(`results at most (default ${DEFAULT_SEARCH_LIMIT}); fewer when they would not fit one answer`),
  source: z
    .string()
    .optional()
    .describe(
      'only this source id (its current commit, listed or not), or "<source id>@<commit>" for one served commit',
    ),
});

const resultSchema = z.object({
  uri: z.string(),
  name: z.string(),
  description: z.string(),
  source: z.string(),
  /** The ref of a `refs:` source the skill's source serves (`refs/tags/v2.1.0`). */
  ref: z.string().optional(),
  commit: z.string(),
  score: z.number(),
});

const outputSchema = z.object({
  results: z.array(resultSchema),
  /** Skills matching the query in all; `results` holds the best of them. */
  total: z.number(),
});

const config = {
  title: 'Search skills',
  description:
    'Find skills by what you want to do, ranked best first (name, description and the SKILL.md text are ' +
    'searched). Use it when skill_list would be too long, or you know the task but not the skill; then load ' +
    'the best one with skill_load.',
  inputSchema,
  outputSchema,
  annotations: READ_ONLY,
};

type Result = z.infer<typeof resultSchema>;

/**
 * The namespaces searched: every listed one, or the one `source` names (`id`: its current commit, listed or
 * not, as a ref of a `refs:` source past `list:`; `id@commit`: one served commit).
 */
function namespacesOf(catalog: CatalogReader, source: string | undefined): Namespace[] | undefined {
  if (source === undefined) return [...catalog.listed()];
  const at = source.indexOf('@');
  const ns =
    at === -1
      ? catalog.state.sources.find((served) => served.id === source)?.current
      : catalog.namespace(source.slice(0, at), source.slice(at + 1));
  return ns === undefined ? undefined : [ns];
}

const resultOf = ({ served, score }: SearchHit): Result => ({
  uri: served.uri,
  name: served.skill.name,
  description: oneLine(served.description),
  source: served.ns.source,
  // structuredContent, checked against outputSchema and sent as JSON: a namespace that follows no ref has no key.
  ...(served.ns.origin.ref === undefined ? {} : { ref: served.ns.origin.ref }),
  commit: served.ns.commit,
  score: Math.round(score * 1000) / 1000,
});

const clip = (text: string, chars: number) => (text.length <= chars ? text : `${text.slice(0, chars - 1)}…`);

/** One result of the text: rank, name, source (and ref), URI, the description cut short. */
const resultLine = (result: Result, rank: number) =>
  `${rank}. ${result.name} (${result.source}${result.ref === undefined ? '' : `, ${result.ref}`}) ${result.uri}: ${clip(result.description.replace(/\s+/g, ' '), SEARCH_LINE_DESCRIPTION_CHARS)}`;

/** The best `limit` hits, ending before the one that would take text and structure past LIST_PAGE_CHARS. */
function bestOf(hits: readonly SearchHit[], limit: number): { results: Result[]; lines: string[] } {
  const results: Result[] = [];
  const lines: string[] = [];
  let chars = 0;
  for (const hit of hits.slice(0, limit)) {
    const result = resultOf(hit);
    const line = resultLine(result, results.length + 1);
    chars += line.length + JSON.stringify(result).length;
    if (results.length > 0 && chars > LIST_PAGE_CHARS) break;
    results.push(result);
    lines.push(line);
  }
  return { results, lines };
}

/** skill_search: the served skills (listed ones unless `source` names a commit) ranked against a query. */
export function registerSkillSearch(mcp: McpServer, { catalog }: ToolDeps): void {
  mcp.registerTool('skill_search', config, async ({ query, limit, source }) => {
    const namespaces = namespacesOf(catalog, source);
    if (namespaces === undefined)
      return failure(`no source "${source}" is served; skill_list shows the sources and their commits`);
    const hits = await (await searchModule()).searchNamespaces(namespaces, query);
    const { results, lines } = bestOf(hits, limit ?? DEFAULT_SEARCH_LIMIT);
    const text =
      hits.length === 0
        ? 'No served skill matches; try other words, or skill_list to see every skill.'
        : [
            `${results.length} of ${hits.length} matching skills, best first (load one with skill_load):`,
            ...lines,
          ].join('\n');
    return {
      content: [{ type: 'text', text }],
      structuredContent: { results, total: hits.length },
    };
  });
}
