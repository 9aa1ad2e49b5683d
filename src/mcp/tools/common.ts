import type { CallToolResult, ToolAnnotations } from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { CatalogReader } from '../../catalog/index.ts';
import type { CatalogSkill, FileReader } from '../../catalog/index.ts';
import type { Runner } from '../../run/runner.ts';

/** What a tool answers from: the live catalog, and the one verified read. */
export interface ToolDeps {
  catalog: CatalogReader;
  read: FileReader;
  /** skill_run's state (grants, tokens, the one run); skill_list shows declared scripts through it. */
  runner?: Runner;
  /** Who is asking (caller.ts's principalOf): skill_run's confirmations are bound to it. */
  caller: string;
  /** Prompts served at most (the first skills in listing order); absent when prompts are off. */
  maxPrompts?: number;
}

export const READ_ONLY: ToolAnnotations = {
  readOnlyHint: true,
  idempotentHint: true,
  destructiveHint: false,
  openWorldHint: false,
};

/** Where a result came from: every tool result names its source, commit and URI. */
export const originSchema = z.object({ source: z.string(), commit: z.string(), uri: z.string() });

export function toolOrigin(served: CatalogSkill): z.infer<typeof originSchema> {
  return { source: served.ns.source, commit: served.ns.commit, uri: served.uri };
}

/** Ranked search (and the stemmer with it), loaded with the first search: a server that lists loads none of it. */
export const searchModule = () => import('../search.ts');

export function failure(message: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: message }] };
}
