import { McpServer, ProtocolError, ProtocolErrorCode, type CacheHint } from '@modelcontextprotocol/server';
import { SkillsExtension, type SkillReadResult } from '@modelcontextprotocol/server/ext/skills';
import { listingChanged, type Catalog } from '../catalog/index.ts';
import type { Logger } from '../shared/log.ts';
import { registerPrompts } from './prompts.ts';
import { catalogSkillSource } from './source.ts';
import { registerTools } from './tools.ts';

export const SERVER_NAME = 'skillpin';
export const SERVER_VERSION = '0.1.0';

export interface ServerOptions {
  catalog: Catalog;
  logger: Logger;
  pageSize?: number;
  cache: CacheHint;
  /** Register skill_list, skill_load and skill_file. */
  tools?: boolean;
  /** Serve one prompt per listed skill. */
  prompts?: boolean;
}

function toContents(uri: string, result: SkillReadResult) {
  const mimeType = result.mimeType === undefined ? {} : { mimeType: result.mimeType };
  return 'text' in result
    ? { uri, ...mimeType, text: result.text }
    : { uri, ...mimeType, blob: Buffer.from(result.bytes).toString('base64') };
}

/**
 * Returns a factory of MCP servers (one per stdio connection or HTTP exchange) over one catalog and one
 * skills extension. Every server instance sees the same live catalog.
 */
export function createServerFactory(options: ServerOptions): () => McpServer {
  const source = catalogSkillSource(options.catalog, { pageSize: options.pageSize, logger: options.logger });
  const extension = new SkillsExtension({
    source,
    cacheHint: options.cache,
    onWarning: (warning) => options.logger.warn({ path: warning.path }, warning.message),
  });
  // Every server made here is told when the listing changes (stdio connections, 2025-11-25 HTTP sessions).
  const made = new Set<WeakRef<McpServer>>();
  options.catalog.onChange((previous, next) => {
    if (!listingChanged(previous, next)) return;
    for (const reference of made) {
      const mcp = reference.deref();
      if (mcp === undefined) made.delete(reference);
      else if (mcp.isConnected()) {
        mcp.server.sendResourceListChanged().catch(() => undefined);
        if (options.prompts !== false) mcp.server.sendPromptListChanged().catch(() => undefined);
      }
    }
  });
  return () => {
    const mcp = new McpServer(
      { name: SERVER_NAME, version: SERVER_VERSION },
      { capabilities: { resources: { listChanged: true } }, cacheHints: { 'resources/read': options.cache } },
    );
    extension.attach(mcp);
    // The SDK's resources/read parses the URI with WHATWG URL first, which resolves `..` and `%2e%2e`
    // segments before any handler sees them; skillpin refuses those, so it reads the raw URI itself.
    mcp.server.removeRequestHandler('resources/read');
    mcp.server.setRequestHandler('resources/read', async (request) => {
      const uri = request.params.uri;
      try {
        return { contents: [toContents(uri, await source.readVerified(uri))] };
      } catch (error) {
        if (error instanceof ProtocolError) throw error;
        options.logger.error({ uri, err: (error as Error).message }, 'resources/read failed');
        throw new ProtocolError(ProtocolErrorCode.InternalError, `internal error reading ${uri}`);
      }
    });
    if (options.tools !== false) registerTools(mcp, options.catalog, source);
    if (options.prompts !== false) registerPrompts(mcp, options.catalog, source);
    if (made.size >= 1024)
      for (const reference of made) if (reference.deref() === undefined) made.delete(reference);
    made.add(new WeakRef(mcp));
    return mcp;
  };
}
