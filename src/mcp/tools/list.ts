import type { McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { snapshotOf } from '../snapshot.ts';
import type { PlannedScript } from '../run/plan.ts';
import { READ_ONLY, type ToolDeps } from './common.ts';
import { renderList } from './render.ts';
import { renderScripts } from './skillRunRender.ts';

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
    .optional()
    .describe('only skills whose name or description contains every word of this text (case-insensitive)'),
});

const outputSchema = z.object({
  skills: z.array(
    z.object({
      name: z.string(),
      description: z.string(),
      uri: z.string(),
      source: z.string(),
      commit: z.string(),
      files: z.number(),
      bytes: z.number(),
      // Only for a skill that declares scripts (mcp-host:): each declared script is in exactly one of these.
      runnable: z.array(z.string()).optional(),
      declaredNotGranted: z.array(z.string()).optional(),
      unavailableScripts: z
        .array(
          z.object({ script: z.string(), interpreter: z.string(), reason: z.string(), detail: z.string() }),
        )
        .optional(),
    }),
  ),
  problems: z.array(
    z.object({
      source: z.string(),
      commit: z.string(),
      path: z.string(),
      reason: z.string(),
      severity: z.enum(['error', 'warning']),
      detail: z.string(),
    }),
  ),
  failures: z.array(z.object({ source: z.string(), reason: z.string(), detail: z.string() })),
});

const config = {
  title: 'List skills',
  description:
    'List the skills this server serves (name, description, URI, origin), and the problems of the served ' +
    'commits. Filter by source or by words in the name or description.',
  inputSchema,
  outputSchema,
  annotations: READ_ONLY,
};

/** skill_list: every listed skill, the problems of the served commits and the sources that failed. */
export function registerSkillList(mcp: McpServer, { catalog, runner }: ToolDeps): void {
  mcp.registerTool('skill_list', config, async ({ source: only, query }) => {
    const words = (query ?? '').toLowerCase().split(/\s+/).filter(Boolean);
    const matches = (text: string) => words.every((word) => text.includes(word));
    const groups = catalog
      .listed()
      .filter((ns) => only === undefined || ns.source === only)
      .map((ns) => {
        const snapshot = snapshotOf(ns);
        return {
          snapshot,
          skills: snapshot.ordered.filter((served) =>
            matches(`${served.skill.name} ${served.description}`.toLowerCase()),
          ),
        };
      });
    const skills = groups.flatMap(({ skills: found }) =>
      found.map((served) => ({
        name: served.skill.name,
        description: served.description,
        uri: served.uri,
        source: served.ns.source,
        commit: served.ns.commit,
        files: served.skill.files.length,
        bytes: served.skill.bytes,
        ...scriptFields(runner?.scriptsOf(served)),
      })),
    );
    const problems = groups.flatMap(({ snapshot: { ns } }) =>
      [...ns.problems, ...(runner?.problemsOf(ns) ?? [])].map((p) => ({
        source: ns.source,
        commit: ns.commit,
        ...p,
      })),
    );
    const failures = catalog.state.failures.filter((f) => only === undefined || f.id === only);
    const filtered = words.length > 0 || only !== undefined;
    return {
      content: [
        {
          type: 'text',
          text: renderList(groups, filtered, problems, failures, (served) =>
            renderScripts(runner?.scriptsOf(served)),
          ),
        },
      ],
      structuredContent: {
        skills,
        problems,
        failures: failures.map((f) => ({ source: f.id, reason: f.reason, detail: f.detail })),
      },
    };
  });
}
