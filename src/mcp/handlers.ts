import type { McpServer, ReadResourceResult } from '@modelcontextprotocol/server';
import {
  RESOURCES_DIRECTORY_READ_METHOD,
  SKILLS_GET_METHOD,
  SKILLS_LIST_METHOD,
  type SkillReadResult,
} from '@modelcontextprotocol/server/ext/skills';
import { z } from 'zod';
import { sourceIdOf } from '../catalog/index.ts';
import type { CachePolicy } from './cache.ts';
import { MAX_CURSOR_CHARS } from './paging.ts';
import { isModernProtocol } from './protocol.ts';
import type { ServingState } from './serving.ts';
import type { CatalogSkillSource } from './source.ts';

const cursor = z.string().max(MAX_CURSOR_CHARS).optional();
const listParams = z.object({ cursor });
const getParams = z.object({ uri: z.string() });
const directoryParams = z.object({ uri: z.string(), cursor });

function toContents(uri: string, result: SkillReadResult): ReadResourceResult['contents'][number] {
  // A resources/read result: a content without a MIME type has no mimeType key (the SDK's schema, the JSON sent).
  const mimeType = result.mimeType === undefined ? {} : { mimeType: result.mimeType };
  return 'text' in result
    ? { uri, ...mimeType, text: result.text }
    : { uri, ...mimeType, blob: Buffer.from(result.bytes).toString('base64') };
}

/** The configured source that serves `id`: a ref of a `refs:` source is served under that source's settings. */
function configuredSource(serving: ServingState, id: string): string {
  return serving.state.sources.find((served) => served.id === id)?.group ?? id;
}

/**
 * skills/list, skills/get, resources/read and resources/directory/read answered from the snapshots, in place of
 * the extension's own handlers: those check every entry of an untrusted source on every request (the SDK trusts
 * only its own catalog), while ours were built once, from indexed and validated skills, and are frozen. Each
 * result carries its own cache hint (the SDK takes one for all): listings are short-lived, what a commit-pinned
 * URI names never changes.
 */
export function answerFromSnapshots(
  mcp: McpServer,
  serving: () => ServingState,
  source: CatalogSkillSource,
  cache: CachePolicy,
): void {
  const server = mcp.server;
  const modern = () => isModernProtocol(server.getNegotiatedProtocolVersion());
  // Every URI given here was just served, so it parsed: its authority is its source id.
  const pinnedHint = (uri: string) => cache.pinned(configuredSource(serving(), sourceIdOf(uri)));
  const pinned = (uri: string) => (modern() ? pinnedHint(uri) : {});
  // Fields in the order the SDK writes them (test/mcp/adapter.test.ts): a result's own hint, then `resultType`,
  // then `_meta`; a resource's hint (registerResource's) after `resultType`.
  const complete = 'complete' as const;
  server.removeRequestHandler(SKILLS_LIST_METHOD);
  server.setRequestHandler(SKILLS_LIST_METHOD, { params: listParams }, async ({ cursor }) => {
    const { _meta, ...page } = serving().listing(cursor);
    return modern() ? { ...page, ...cache.listed, resultType: complete, _meta } : { ...page, _meta };
  });
  server.removeRequestHandler(SKILLS_GET_METHOD);
  server.setRequestHandler(SKILLS_GET_METHOD, { params: getParams }, async ({ uri }) => ({
    skill: await source.get(uri),
    ...pinned(uri),
  }));
  // The SDK's resources/read parses the URI with WHATWG URL first, which resolves `..` and `%2e%2e`
  // segments before any handler sees them; skillpin refuses those, so it reads the raw URI itself.
  server.removeRequestHandler('resources/read');
  server.setRequestHandler('resources/read', async ({ params: { uri } }) => {
    const contents = [toContents(uri, await source.read(uri))];
    return modern() ? { contents, resultType: complete, ...pinnedHint(uri) } : { contents };
  });
  server.removeRequestHandler(RESOURCES_DIRECTORY_READ_METHOD);
  server.setRequestHandler(
    RESOURCES_DIRECTORY_READ_METHOD,
    { params: directoryParams },
    async ({ uri, cursor }) => ({
      ...(await source.readDirectory(uri, { cursor })),
      ...pinned(uri),
    }),
  );
}
