import type { McpServer, Prompt } from '@modelcontextprotocol/server';
import type { CatalogReader } from '../catalog/index.ts';
import { parseSkillMd, SKILL_MD } from '../skills/index.ts';
import { invalidParams } from './errors.ts';
import type { FileReader } from '../catalog/index.ts';
import { META_PREFIX, type ServedSkill } from './snapshot.ts';
import { type CatalogView, viewOf } from './view.ts';

const URI_META = `${META_PREFIX}uri`;

// A served SKILL.md parsed once when the skill was indexed; its body is split off once per skill, here.
const bodies = new WeakMap<ServedSkill, string>();

async function bodyOf(served: ServedSkill, read: FileReader): Promise<string> {
  const known = bodies.get(served);
  if (known !== undefined) return known;
  const parsed = parseSkillMd(await read(served.ns, served.files.get(SKILL_MD)!));
  const body = parsed.ok ? parsed.body : '';
  bodies.set(served, body);
  return body;
}

const capped = new WeakMap<CatalogView, Map<number, ReadonlyMap<string, ServedSkill>>>();

/** The view's first `max` prompts, once per view and cap. */
function servedPrompts(view: CatalogView, max: number): ReadonlyMap<string, ServedSkill> {
  let byCap = capped.get(view);
  if (byCap === undefined) capped.set(view, (byCap = new Map()));
  let prompts = byCap.get(max);
  if (prompts === undefined) byCap.set(max, (prompts = new Map([...view.prompts].slice(0, max))));
  return prompts;
}

/**
 * prompts/list and prompts/get over the live catalog (a swap shows at the next request): one prompt for each of
 * the first `max` listed skills, in listing order; skill_list says when there are more skills than prompts.
 */
export function registerPrompts(mcp: McpServer, catalog: CatalogReader, read: FileReader, max: number): void {
  const server = mcp.server;
  server.registerCapabilities({ prompts: { listChanged: true } });
  server.setRequestHandler('prompts/list', async () => ({
    prompts: [...servedPrompts(viewOf(catalog), max)].map(
      ([name, served]): Prompt => ({
        name,
        title: served.skill.name,
        description: served.description,
        _meta: { ...served.meta, [URI_META]: served.uri },
      }),
    ),
  }));
  server.setRequestHandler('prompts/get', async (request) => {
    const served = servedPrompts(viewOf(catalog), max).get(request.params.name);
    if (served === undefined)
      throw invalidParams(`no prompt named ${JSON.stringify(request.params.name)}; prompts/list shows them`);
    const { ns, skill, uri } = served;
    return {
      description: `${served.description} (skill ${uri})`,
      messages: [
        {
          role: 'user' as const,
          content: {
            type: 'text' as const,
            text: `The following are the instructions of the skill "${skill.name}", from skillpin source "${ns.source}" at commit ${ns.commit}: ${uri}`,
          },
        },
        { role: 'user' as const, content: { type: 'text' as const, text: await bodyOf(served, read) } },
      ],
      _meta: { ...served.meta, [URI_META]: uri },
    };
  });
}
