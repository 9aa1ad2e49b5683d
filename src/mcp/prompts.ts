import type { McpServer, Prompt } from '@modelcontextprotocol/server';
import type { FileReader } from '../catalog/index.ts';
import { invalidParams } from './errors.ts';
import type { ServingState } from './serving.ts';
import { META_PREFIX } from './snapshot.ts';

const URI_META = `${META_PREFIX}uri`;

/**
 * prompts/list and prompts/get over what `serving` gives at each request (a swap shows at the next one): one
 * prompt for each of the first `max` listed skills, in listing order; skill_list says when there are more skills
 * than prompts.
 */
export function registerPrompts(
  mcp: McpServer,
  serving: () => ServingState,
  read: FileReader,
  max: number,
): void {
  const server = mcp.server;
  server.registerCapabilities({ prompts: { listChanged: true } });
  server.setRequestHandler('prompts/list', async () => ({
    prompts: [...serving().servedPrompts(max)].map(
      ([name, served]): Prompt => ({
        name,
        title: served.skill.name,
        description: served.description,
        _meta: { ...served.meta, [URI_META]: served.uri },
      }),
    ),
  }));
  server.setRequestHandler('prompts/get', async (request) => {
    const state = serving();
    const served = state.servedPrompts(max).get(request.params.name);
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
        {
          role: 'user' as const,
          content: { type: 'text' as const, text: await state.promptBody(served, read) },
        },
      ],
      _meta: { ...served.meta, [URI_META]: uri },
    };
  });
}
