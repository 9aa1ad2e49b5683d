import type { McpServer } from '@modelcontextprotocol/server';
import type { ToolDeps } from './common.ts';
import { registerSkillFile } from './file.ts';
import { registerSkillList } from './list.ts';
import { registerSkillLoad } from './load.ts';
import { registerSkillRun } from './skillRun.ts';
import { registerSkillSearch } from './search.ts';

export type { ToolDeps } from './common.ts';

/**
 * skill_list, skill_search, skill_load and skill_file: the same skills for hosts without the skills extension, the same
 * bytes as resources/read (every read goes through the same verified read); skill_run where scripts are granted.
 */
export function registerTools(mcp: McpServer, deps: ToolDeps): void {
  registerSkillList(mcp, deps);
  registerSkillSearch(mcp, deps);
  registerSkillLoad(mcp, deps);
  registerSkillFile(mcp, deps);
  // Only where the owner granted something: otherwise the tool would only ever refuse.
  if (deps.runner?.enabled === true) registerSkillRun(mcp, { ...deps, runner: deps.runner });
}
