import type { CallToolResult, McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { Namespace } from '../../catalog/index.ts';
import type { ServingState } from '../serving.ts';
import {
  DEFAULT_SEARCH_LIMIT,
  LIST_PAGE_CHARS,
  MAX_SEARCH_LIMIT,
  MAX_SEARCH_QUERY_CHARS,
  SEARCH_LINE_DESCRIPTION_CHARS,
} from '../budget.ts';
import type { SearchHit } from '../search.ts';
import type { ServedSkill } from '../snapshot.ts';
import { failure, READ_ONLY, type ToolDeps } from './common.ts';
import { oneLine } from '../../shared/text.ts';

/** The tool's name: the Mcp-Name of its calls. */
export const SKILL_SEARCH = 'skill_search';

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

const words = z.array(z.string()).optional();

/** Where the query's words matched (each word as the query said it), so a host or a person can judge the result. */
const matchedSchema = z.object({
  /** The query is the skill's name, or its name's words. */
  exactName: z.literal(true).optional(),
  name: words,
  description: words,
  headings: words,
  text: words,
});

const versionSchema = z.object({
  uri: z.string(),
  source: z.string(),
  ref: z.string().optional(),
  commit: z.string(),
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
  matched: matchedSchema,
  /** Older versions of this skill (other refs of its `refs:` source) that matched too, newest first. */
  versions: z.array(versionSchema).optional(),
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
function namespacesOf(serving: ServingState, source: string | undefined): Namespace[] | undefined {
  if (source === undefined) return [...serving.namespaces];
  const at = source.indexOf('@');
  const ns =
    at === -1
      ? serving.state.sources.find((served) => served.id === source)?.current
      : serving.namespace(source.slice(0, at), source.slice(at + 1));
  return ns === undefined ? undefined : [ns];
}

/** Where a skill is served: URI, source, the ref of a `refs:` source, commit. */
const placeOf = (served: ServedSkill) => ({
  uri: served.uri,
  source: served.ns.source,
  // structuredContent, checked against outputSchema and sent as JSON: a namespace that follows no ref has no key.
  ...(served.ns.origin.ref === undefined ? {} : { ref: served.ns.origin.ref }),
  commit: served.ns.commit,
});

const resultOf = ({ served, score, matched, versions }: SearchHit): Result => {
  const { uri, ...where } = placeOf(served);
  return {
    uri,
    name: served.skill.name,
    description: oneLine(served.description),
    ...where,
    score: Math.round(score * 1000) / 1000,
    matched: matched(),
    ...(versions === undefined || versions.length === 0 ? {} : { versions: versions.map(placeOf) }),
  };
};

/** Why a result matched, in a few words: `the query is its name`, or the places and the words found there. */
function whyLine({ exactName, ...places }: Result['matched']): string {
  const found = Object.entries(places).map(([place, said]) => `${place} (${said.join(', ')})`);
  return [
    ...(exactName ? ['the query is its name'] : []),
    ...(found.length > 0 ? [`matched ${found.join(', ')}`] : []),
  ].join('; ');
}

const clip = (text: string, chars: number) => (text.length <= chars ? text : `${text.slice(0, chars - 1)}…`);

/** One result of the text: rank, name, source (and ref), URI, the description cut short, why it matched, and the
 * other versions' refs. */
const resultLine = (result: Result, rank: number) =>
  `${rank}. ${result.name} (${result.source}${result.ref === undefined ? '' : `, ${result.ref}`}) ${result.uri}: ${clip(result.description.replace(/\s+/g, ' '), SEARCH_LINE_DESCRIPTION_CHARS)} [${whyLine(result.matched)}]${
    result.versions === undefined ? '' : ` (also ${result.versions.map((v) => v.ref ?? v.source).join(', ')})`
  }`;

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

/** Each ref of a `refs:` source, by source id, to its source's id: versions of one skill are one result. */
const refGroups = (serving: ServingState) =>
  new Map(
    serving.state.sources.flatMap((served) =>
      served.group === undefined ? [] : [[served.id, served.group]],
    ),
  );

export type SearchArguments = z.infer<typeof inputSchema>;

/** skill_search's arguments when `input` is what the tool takes (the SDK's own check of a call), else undefined. */
export function searchArguments(input: unknown): SearchArguments | undefined {
  const parsed = inputSchema.safeParse(input);
  return parsed.success ? parsed.data : undefined;
}

/** skill_search's answer: the served skills (listed ones unless `source` names a commit) ranked against a query. */
export async function searchAnswer(
  state: ServingState,
  { query, limit, source }: SearchArguments,
): Promise<CallToolResult> {
  const namespaces = namespacesOf(state, source);
  if (namespaces === undefined)
    return failure(`no source "${source}" is served; skill_list shows the sources and their commits`);
  const most = limit ?? DEFAULT_SEARCH_LIMIT;
  const { hits, total } = await state.searchTop(namespaces, query, most, refGroups(state));
  const { results, lines } = bestOf(hits, most);
  const text =
    total === 0
      ? 'No served skill matches; try other words, or skill_list to see every skill.'
      : [
          `${results.length} of ${total} matching skills, best first (load one with skill_load):`,
          ...lines,
        ].join('\n');
  return {
    content: [{ type: 'text', text }],
    structuredContent: { results, total },
  };
}

/** skill_search, answered from what its caller is served when it is called. */
export function registerSkillSearch(mcp: McpServer, { serving }: ToolDeps): void {
  mcp.registerTool(SKILL_SEARCH, config, (input) => searchAnswer(serving(), input));
}
