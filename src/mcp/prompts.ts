import { ProtocolError, ProtocolErrorCode, type McpServer, type Prompt } from '@modelcontextprotocol/server';
import type { Catalog } from '../catalog/index.ts';
import { parseSkillMd } from '../skills/index.ts';
import { provenance } from './entries.ts';
import { listedSkills, type Found } from './lookup.ts';
import type { CatalogSkillSource } from './source.ts';

/**
 * One prompt per listed skill. Names stay unique across sources: a skill's name alone when no other listed
 * skill has it, `<source>/<name>` when another source has it too, `<source>/<served path>` when even that repeats.
 */
export function promptNames(catalog: Catalog): Map<string, Found> {
  const listed = listedSkills(catalog);
  const count = (key: (f: Found) => string) => {
    const counts = new Map<string, number>();
    for (const f of listed) counts.set(key(f), (counts.get(key(f)) ?? 0) + 1);
    return counts;
  };
  const byName = count((f) => f.skill.name);
  const bySourceName = count((f) => `${f.ns.source}/${f.skill.name}`);
  const names = new Map<string, Found>();
  for (const found of listed) {
    const qualified = `${found.ns.source}/${found.skill.name}`;
    const name =
      byName.get(found.skill.name) === 1
        ? found.skill.name
        : bySourceName.get(qualified) === 1
          ? qualified
          : `${found.ns.source}/${found.skill.servedDir}`;
    names.set(name, found);
  }
  return names;
}

/** prompts/list and prompts/get over the live catalog: a swap shows at the next request. */
export function registerPrompts(mcp: McpServer, catalog: Catalog, source: CatalogSkillSource): void {
  const server = mcp.server;
  server.registerCapabilities({ prompts: { listChanged: true } });
  server.setRequestHandler('prompts/list', async () => ({
    prompts: [...promptNames(catalog)].map(
      ([name, { ns, skill, uri }]): Prompt => ({
        name,
        title: skill.name,
        description: String(skill.frontmatter['description']),
        _meta: { ...provenance(ns, skill), 'dev.skillpin/uri': uri },
      }),
    ),
  }));
  server.setRequestHandler('prompts/get', async (request) => {
    const found = promptNames(catalog).get(request.params.name);
    if (found === undefined)
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `no prompt named ${JSON.stringify(request.params.name)}; prompts/list shows them`,
      );
    const read = (await source.readVerified(found.uri)) as { text?: string };
    const parsed = parseSkillMd(new TextEncoder().encode(read.text ?? ''));
    const body = parsed.ok ? parsed.body : (read.text ?? '');
    return {
      description: `${String(found.skill.frontmatter['description'])} (skill ${found.uri})`,
      messages: [
        {
          role: 'user' as const,
          content: {
            type: 'text' as const,
            text: `The following are the instructions of the skill "${found.skill.name}", from skillpin source "${found.ns.source}" at commit ${found.ns.commit}: ${found.uri}`,
          },
        },
        { role: 'user' as const, content: { type: 'text' as const, text: body } },
      ],
      _meta: { ...provenance(found.ns, found.skill), 'dev.skillpin/uri': found.uri },
    };
  });
}
