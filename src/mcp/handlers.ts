import type { McpServer, ReadResourceResult } from '@modelcontextprotocol/server';
import {
  RESOURCES_DIRECTORY_READ_METHOD,
  SKILLS_GET_METHOD,
  SKILLS_LIST_METHOD,
  type SkillReadResult,
} from '@modelcontextprotocol/server/ext/skills';
import { z } from 'zod';
import { parseSkillUri } from '../catalog/index.ts';
import type { CachePolicy } from './cache.ts';
import { isModernProtocol } from './protocol.ts';
import type { CatalogSkillSource } from './source.ts';

const listParams = z.object({ cursor: z.string().optional() });
const getParams = z.object({ uri: z.string() });
const directoryParams = z.object({ uri: z.string(), cursor: z.string().optional() });

function toContents(uri: string, result: SkillReadResult): ReadResourceResult['contents'][number] {
  const mimeType = result.mimeType === undefined ? {} : { mimeType: result.mimeType };
  return 'text' in result
    ? { uri, ...mimeType, text: result.text }
    : { uri, ...mimeType, blob: Buffer.from(result.bytes).toString('base64') };
}

/** The source id of a URI that was just served (so it parses). */
const sourceOf = (uri: string) => {
  const parsed = parseSkillUri(uri);
  return parsed.ok ? parsed.source : '';
};

/**
 * skills/list, skills/get, resources/read and resources/directory/read answered from the snapshots, in place of
 * the extension's own handlers: those check every entry of an untrusted source on every request (the SDK trusts
 * only its own catalog), while ours were built once, from indexed and validated skills, and are frozen. Each
 * result carries its own cache hint (the SDK takes one for all): listings are short-lived, what a commit-pinned
 * URI names never changes.
 */
export function answerFromSnapshots(mcp: McpServer, source: CatalogSkillSource, cache: CachePolicy): void {
  const server = mcp.server;
  const modern = () => isModernProtocol(server.getNegotiatedProtocolVersion());
  const listed = () => (modern() ? cache.listed : {});
  const pinned = (uri: string) => (modern() ? cache.pinned(sourceOf(uri)) : {});
  server.removeRequestHandler(SKILLS_LIST_METHOD);
  server.setRequestHandler(SKILLS_LIST_METHOD, { params: listParams }, async ({ cursor }) => ({
    ...(await source.list(cursor === undefined ? {} : { cursor })),
    ...listed(),
  }));
  server.removeRequestHandler(SKILLS_GET_METHOD);
  server.setRequestHandler(SKILLS_GET_METHOD, { params: getParams }, async ({ uri }) => ({
    skill: await source.get(uri),
    ...pinned(uri),
  }));
  // The SDK's resources/read parses the URI with WHATWG URL first, which resolves `..` and `%2e%2e`
  // segments before any handler sees them; skillpin refuses those, so it reads the raw URI itself.
  server.removeRequestHandler('resources/read');
  server.setRequestHandler('resources/read', async (request) => ({
    contents: [toContents(request.params.uri, await source.read(request.params.uri))],
    ...pinned(request.params.uri),
  }));
  server.removeRequestHandler(RESOURCES_DIRECTORY_READ_METHOD);
  server.setRequestHandler(
    RESOURCES_DIRECTORY_READ_METHOD,
    { params: directoryParams },
    async ({ uri, cursor }) => ({
      ...(await source.readDirectory(uri, cursor === undefined ? {} : { cursor })),
      ...pinned(uri),
    }),
  );
}
