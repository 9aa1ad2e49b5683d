import type { McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';
import {
  DEFAULT_LIST_LIMIT,
  LIST_PAGE_CHARS,
  MAX_LIST_LIMIT,
  MAX_LISTED_PROBLEMS,
  MAX_SEARCH_QUERY_CHARS,
} from '../budget.ts';
import { cutPage, MAX_CURSOR_CHARS, startAfterKey, startOf } from '../paging.ts';
import type { ServedSkill } from '../snapshot.ts';
import type { PlannedScript } from '../../run/plan.ts';
import { READ_ONLY, type ToolDeps } from './common.ts';
import { renderList, skillLine } from './render.ts';
import { renderScripts } from './skillRunRender.ts';
import { oneLine, visible } from '../../shared/text.ts';

/** A skill's declared scripts by what became of them here: runnable, not granted, unavailable. */
function scriptFields(scripts: readonly PlannedScript[] | undefined) {
  if (scripts === undefined || scripts.length === 0) return {};
  const named = (state: PlannedScript['status']['state']) =>
    scripts.filter((p) => p.status.state === state).map((p) => p.declared.script);
  return {
    runnable: named('runnable'),
    declaredNotGranted: named('not-granted'),
    unavailableScripts: scripts.flatMap(({ declared, status }) =>
      status.state === 'unavailable'
        ? [
            {
              script: declared.script,
              interpreter: declared.interpreter,
              reason: status.reason,
              detail: status.detail,
            },
          ]
        : [],
    ),
  };
}

const inputSchema = z.object({
  source: z.string().optional().describe('only skills of this source id'),
  query: z
    .string()
    .max(MAX_SEARCH_QUERY_CHARS)
    .optional()
    .describe('only skills matching this text, best first (ranked as skill_search ranks them)'),
  limit: z
    .number()
    .int()
    .min(1)
    .max(MAX_LIST_LIMIT)
    .optional()
    .describe(`skills per page (default ${DEFAULT_LIST_LIMIT}); a page also ends before it grows too large`),
  cursor: z.string().max(MAX_CURSOR_CHARS).optional().describe('nextCursor of the previous page'),
});

const skillSchema = z.object({
  name: z.string(),
  description: z.string(),
  uri: z.string(),
  source: z.string(),
  /** The ref of a `refs:` source the skill's source serves (`refs/tags/v2.1.0`). */
  ref: z.string().optional(),
  commit: z.string(),
  files: z.number(),
  bytes: z.number(),
  // Only for a skill that declares scripts (mcp-host:): each declared script is in exactly one of these.
  runnable: z.array(z.string()).optional(),
  declaredNotGranted: z.array(z.string()).optional(),
  unavailableScripts: z
    .array(z.object({ script: z.string(), interpreter: z.string(), reason: z.string(), detail: z.string() }))
    .optional(),
});

const outputSchema = z.object({
  skills: z.array(skillSchema),
  /** Skills matching the filters, on every page. */
  total: z.number(),
  nextCursor: z.string().optional(),
  problems: z.array(
    z.object({
      source: z.string(),
      commit: z.string(),
      path: z.string(),
      reason: z.string(),
      severity: z.enum(['error', 'warning', 'info']),
      detail: z.string(),
    }),
  ),
  problemsTotal: z.number(),
  failures: z.array(z.object({ source: z.string(), reason: z.string(), detail: z.string() })),
  prompts: z.object({ served: z.number(), skills: z.number(), capped: z.boolean() }).optional(),
});

const config = {
  title: 'List skills',
  description:
    'List the skills this server serves (name, description, URI, origin), a page at a time (total and nextCursor ' +
    'say whether there are more), and the problems of the served commits. Filter by source, or rank by a query ' +
    '(as skill_search does).',
  inputSchema,
  outputSchema,
  annotations: READ_ONLY,
};

type ListedSkill = z.infer<typeof skillSchema>;

const entryOf = (served: ServedSkill, scripts?: readonly PlannedScript[]): ListedSkill => ({
  name: served.skill.name,
  // What a host shows, and the model reads: nothing in it may hide or reorder what follows (skills/get has it verbatim).
  description: oneLine(served.description),
  uri: served.uri,
  source: served.ns.source,
  // structuredContent, checked against outputSchema and sent as JSON: a namespace that follows no ref has no key.
  ...(served.ns.origin.ref === undefined ? {} : { ref: served.ns.origin.ref }),
  commit: served.ns.commit,
  files: served.skill.files.length,
  bytes: served.skill.bytes,
  ...scriptFields(scripts),
});

/**
 * skill_list: the listed skills a page at a time (sorted by URI, or best first with a query; the cursor names the
 * last URI of a page, so it survives a catalog swap), the problems of the served commits on the first page, and the sources that failed.
 */
export function registerSkillList(mcp: McpServer, { serving, runner, maxPrompts }: ToolDeps): void {
  mcp.registerTool('skill_list', config, async ({ source: only, query, limit, cursor }) => {
    const view = serving();
    const byQuery = query !== undefined && query.trim() !== '';
    // With a query, the skills matching it best first; without, every listed skill sorted by URI.
    const matching = byQuery
      ? (
          await view.search(
            view.namespaces.filter((ns) => only === undefined || ns.source === only),
            query,
          )
        ).map((hit) => hit.served)
      : view.listed.filter((served) => only === undefined || served.ns.source === only);
    const entry = (served: ServedSkill) => entryOf(served, runner?.scriptsOf(served));
    const uriOf = (served: ServedSkill) => served.uri;
    // Up to `limit`, ending before the skill that would take text and structure past LIST_PAGE_CHARS.
    const { items: page, nextCursor } = cutPage(matching, {
      start: (byQuery ? startAfterKey : startOf)(matching, uriOf, cursor),
      size: limit ?? DEFAULT_LIST_LIMIT,
      keyOf: uriOf,
      budget: {
        max: LIST_PAGE_CHARS,
        cost: (served) => skillLine(served).length + JSON.stringify(entry(served)).length,
      },
    });
    const entries = page.map(entry);
    const listed = view.namespaces.filter((ns) => only === undefined || ns.source === only);
    // A problem names a repository's path and may quote its bytes: written out visibly.
    const all = listed.flatMap((ns) =>
      [...ns.problems, ...(runner?.problemsOf(ns) ?? [])].map((p) => ({
        source: ns.source,
        commit: ns.commit,
        ...p,
        path: visible(p.path),
        detail: visible(p.detail),
      })),
    );
    // Errors first: what is not served matters more than what is served with a warning, which matters more than
    // what is only said (info).
    const ranked = (['error', 'warning', 'info'] as const).flatMap((severity) =>
      all.filter((p) => p.severity === severity),
    );
    const problems = cursor === undefined ? ranked.slice(0, MAX_LISTED_PROBLEMS) : [];
    const failures = view.state.failures
      .filter((f) => only === undefined || f.id === only)
      .map((f) => ({ ...f, detail: visible(f.detail) }));
    const prompts =
      maxPrompts === undefined
        ? undefined
        : {
            served: Math.min(maxPrompts, view.prompts.size),
            skills: view.prompts.size,
            capped: view.prompts.size > maxPrompts,
          };
    const text = renderList({
      page,
      total: matching.length,
      filtered: byQuery || only !== undefined,
      first: cursor === undefined,
      nextCursor,
      problems,
      problemsTotal: all.length,
      counts: all,
      failures,
      prompts,
      scriptsLine: (served) => renderScripts(runner?.scriptsOf(served)),
    });
    return {
      content: [{ type: 'text', text }],
      // Checked against outputSchema and sent as JSON: no nextCursor on the last page, no prompts without them.
      structuredContent: {
        skills: entries,
        total: matching.length,
        ...(nextCursor === undefined ? {} : { nextCursor }),
        problems: problems.map(({ line: _line, ...p }) => p),
        problemsTotal: all.length,
        failures: failures.map((f) => ({ source: f.id, reason: f.reason, detail: f.detail })),
        ...(prompts === undefined ? {} : { prompts }),
      },
    };
  });
}
