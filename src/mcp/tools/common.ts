import type { CallToolResult, ToolAnnotations } from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { CatalogSkill, FileReader } from '../../catalog/index.ts';
import type { Runner } from '../../run/runner.ts';
import type { ServingState } from '../serving.ts';

/** What a tool answers from: what its caller is served now (taken once per call), and the one verified read. */
export interface ToolDeps {
  serving: () => ServingState;
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

export function failure(message: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: message }] };
}
