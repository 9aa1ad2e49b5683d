import {
  McpServer,
  ProtocolError,
  type CacheHint,
  type McpRequestContext,
  type ReadResourceResult,
} from '@modelcontextprotocol/server';
import { SkillsExtension, type SkillReadResult } from '@modelcontextprotocol/server/ext/skills';
import { listingChanged, type Catalog } from '../catalog/index.ts';
import type { Logger } from '../shared/log.ts';
import { messageOf } from '../shared/text.ts';
import { internalError } from './errors.ts';
import { registerPrompts } from './prompts.ts';
import { verifiedReader } from './read.ts';
import { catalogSkillSource } from './source.ts';
import { registerTools } from './tools/index.ts';

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

/** Makes the server for one stdio connection, one 2025-11-25 session or one HTTP request. */
export type ServerFactory = (context?: McpRequestContext) => McpServer;

function toContents(uri: string, result: SkillReadResult): ReadResourceResult['contents'][number] {
  const mimeType = result.mimeType === undefined ? {} : { mimeType: result.mimeType };
  return 'text' in result
    ? { uri, ...mimeType, text: result.text }
    : { uri, ...mimeType, blob: Buffer.from(result.bytes).toString('base64') };
}

/** Tells a connected server's client that the listing changed (and the prompts with it, when it has them). */
export function announceListChanged(mcp: McpServer): void {
  if (!mcp.isConnected()) return;
  mcp.server.sendResourceListChanged().catch(() => undefined);
  if (mcp.server.getCapabilities().prompts !== undefined)
    mcp.server.sendPromptListChanged().catch(() => undefined);
}

/**
 * A factory of MCP servers over one catalog. Everything a server answers comes from snapshots built once per
 * namespace, so making one costs the same whatever the catalog's size, and nothing of it outlives the server.
 */
export function createServerFactory(options: ServerOptions): ServerFactory {
  const { catalog, logger } = options;
  const read = verifiedReader(logger);
  const source = catalogSkillSource(catalog, { pageSize: options.pageSize, read });
  const extension = new SkillsExtension({
    source,
    cacheHint: options.cache,
    onWarning: (warning) => logger.warn({ path: warning.path }, warning.message),
  });
  const tools = options.tools !== false;
  const prompts = options.prompts !== false;

  const make = (): McpServer => {
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
        return { contents: [toContents(uri, await source.read(uri))] };
      } catch (error) {
        if (error instanceof ProtocolError) throw error;
        logger.error({ uri, err: messageOf(error) }, 'resources/read failed');
        throw internalError(`internal error reading ${uri}`);
      }
    });
    if (tools) registerTools(mcp, { catalog, read });
    if (prompts) registerPrompts(mcp, catalog, read);
    return mcp;
  };

  return (context) => {
    const mcp = make();
    // HTTP servers are told of changes by the HTTP layer (its sessions, subscriptions/listen); a stdio
    // connection is told here, for as long as it is open.
    if (context?.requestInfo === undefined) {
      const unsubscribe = catalog.onChange((previous, next) => {
        if (listingChanged(previous, next)) announceListChanged(mcp);
      });
      const onclose = mcp.server.onclose;
      mcp.server.onclose = () => {
        unsubscribe();
        onclose?.();
      };
    }
    return mcp;
  };
}
