import type { CacheHint, McpServer, ReadResourceResult } from '@modelcontextprotocol/server';
import {
  SKILLS_GET_METHOD,
  SKILLS_LIST_METHOD,
  type SkillReadResult,
} from '@modelcontextprotocol/server/ext/skills';
import { z } from 'zod';
import { isModernProtocol } from './protocol.ts';
import type { CatalogSkillSource } from './source.ts';

const listParams = z.object({ cursor: z.string().optional() });
const getParams = z.object({ uri: z.string() });

function toContents(uri: string, result: SkillReadResult): ReadResourceResult['contents'][number] {
  const mimeType = result.mimeType === undefined ? {} : { mimeType: result.mimeType };
  return 'text' in result
    ? { uri, ...mimeType, text: result.text }
    : { uri, ...mimeType, blob: Buffer.from(result.bytes).toString('base64') };
}

/**
 * skills/list, skills/get and resources/read answered from the snapshots, in place of the extension's own
 * handlers: those check every entry of an untrusted source on every request (the SDK trusts only its own
 * catalog), while ours were built once, from indexed and validated skills, and are frozen.
 */
export function answerFromSnapshots(mcp: McpServer, source: CatalogSkillSource, cache: CacheHint): void {
  const server = mcp.server;
  const cacheFields = () =>
    isModernProtocol(server.getNegotiatedProtocolVersion())
      ? { ttlMs: cache.ttlMs ?? 0, cacheScope: cache.cacheScope ?? 'private' }
      : {};
  server.removeRequestHandler(SKILLS_LIST_METHOD);
  server.setRequestHandler(SKILLS_LIST_METHOD, { params: listParams }, async ({ cursor }) => ({
    ...(await source.list(cursor === undefined ? {} : { cursor })),
    ...cacheFields(),
  }));
  server.removeRequestHandler(SKILLS_GET_METHOD);
  server.setRequestHandler(SKILLS_GET_METHOD, { params: getParams }, async ({ uri }) => ({
    skill: await source.get(uri),
    ...cacheFields(),
  }));
  // The SDK's resources/read parses the URI with WHATWG URL first, which resolves `..` and `%2e%2e`
  // segments before any handler sees them; skillpin refuses those, so it reads the raw URI itself.
  server.removeRequestHandler('resources/read');
  server.setRequestHandler('resources/read', async (request) => ({
    contents: [toContents(request.params.uri, await source.read(request.params.uri))],
  }));
}
