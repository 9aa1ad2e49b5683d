import { type AuthInfo, McpServer, type McpRequestContext } from '@modelcontextprotocol/server';
import { SkillsExtension } from '@modelcontextprotocol/server/ext/skills';
import {
  type CatalogReader,
  type FileReader,
  listingChanged,
  type Visibility,
  visibleCatalog,
} from '../catalog/index.ts';
import { createRunner, type RunnerOptions } from '../run/runner.ts';
import { DEFAULT_MAX_PROMPTS, defaultRunSettings } from '../config/index.ts';
import type { Logger } from '../shared/log.ts';
import { SERVER_NAME, SERVER_VERSION } from '../shared/version.ts';
import { principalOf, visibilityOf } from './caller.ts';
import { cachePolicy, type CachePolicy } from './cache.ts';
import { answerDirect, answerFromSnapshots, type DirectAnswer } from './handlers.ts';
import { registerPrompts } from './prompts.ts';
import { verifiedReader } from './read.ts';
import { createServingOwner, type ServingOwner, type ServingState } from './serving.ts';
import { catalogSkillSource, type CatalogSkillSource } from './source.ts';
import { registerTools } from './tools/index.ts';

export interface ServerOptions {
  catalog: CatalogReader;
  /** What is served over `catalog` (shared with warming, the status page and metrics); absent: made here. */
  serving?: ServingOwner;
  logger: Logger;
  pageSize?: number;
  /** Cache hints per result; default: `cachePolicy()` (every source private). */
  cache?: CachePolicy;
  /** Told the size of every file read for a client (metrics). */
  onRead?: (source: string, bytes: number) => void;
  /** Register skill_list, skill_load and skill_file. */
  tools?: boolean;
  /** Serve one prompt per listed skill. */
  prompts?: boolean;
  /** skill_run: the owner's grants and how runs are confirmed; absent: nothing runs (skill_list still shows
   * what skills declare). */
  run?: RunnerOptions;
  /** At most this many prompts (default DEFAULT_MAX_PROMPTS). */
  maxPrompts?: number;
}

/** skill_run where the config says nothing: no grants, so nothing runs and no folder is ever written. */
const NOTHING_RUNS = (): RunnerOptions => ({
  grants: new Map(),
  settings: defaultRunSettings(),
  dir: '',
  environ: { state: 'not-applicable', detail: 'no source grants a script' },
});

/**
 * Makes the server for one stdio connection, one 2025-11-25 session or one HTTP request; it serves the sources
 * the context's caller may see (every source without authInfo).
 */
export type ServerFactory = ((context?: McpRequestContext) => McpServer) & {
  /**
   * A lone 2026-07-28 request over HTTP answered without a server, as its caller (`authInfo`) sees the catalog
   * (mcp/handlers.ts `answerDirect`: skills/list, resources/read of a file, tools/call of skill_search);
   * `undefined`: a server answers it.
   */
  answerDirect?(
    request: Request,
    body: unknown,
    authInfo: AuthInfo | undefined,
  ): Promise<DirectAnswer | undefined>;
};

/** What one server registers: all of it, or for a 2026-07-28 request only what its method needs. */
interface Surface {
  skills: boolean;
  tools: boolean;
  prompts: boolean;
}

const EVERYTHING: Surface = { skills: true, tools: true, prompts: true };

// A 2026-07-28 request names its method in the Mcp-Method header, which the SDK has checked against the body
// before it asks for a server (SEP-2243); server/discover and subscriptions/listen get everything, as they
// report capabilities.
function surfaceFor(context: McpRequestContext | undefined): Surface {
  const method = context?.era === 'modern' ? context.requestInfo?.headers.get('mcp-method') : undefined;
  if (method === undefined || method === null) return EVERYTHING;
  const family = method.slice(0, method.indexOf('/') + 1);
  if (family === 'skills/' || family === 'resources/') return { skills: true, tools: false, prompts: false };
  if (family === 'tools/') return { skills: false, tools: true, prompts: false };
  if (family === 'prompts/') return { skills: false, tools: false, prompts: true };
  return EVERYTHING;
}

/** Tells a connected server's client that the listing changed (and the prompts with it, when it has them). */
export function announceListChanged(mcp: McpServer): void {
  if (!mcp.isConnected()) return;
  mcp.server.sendResourceListChanged().catch(() => undefined);
  if (mcp.server.getCapabilities().prompts !== undefined)
    mcp.server.sendPromptListChanged().catch(() => undefined);
}

/** One caller's catalog, what it is served now, and the skill source and extension over it. */
interface Caller {
  catalog: CatalogReader;
  current: () => ServingState;
  source: CatalogSkillSource;
  extension: SkillsExtension;
}

/**
 * A factory of MCP servers over one catalog. Everything a server answers comes from the ServingState of its
 * caller's visibility at the catalog's state (serving.ts), so making one costs the same whatever the catalog's
 * size, and nothing of it outlives the server.
 */
export function createServerFactory(options: ServerOptions): ServerFactory {
  const { logger, onRead } = options;
  const cache = options.cache ?? cachePolicy();
  const verified = verifiedReader(logger);
  const read: FileReader =
    onRead === undefined
      ? verified
      : async (ns, file) => {
          const bytes = await verified(ns, file);
          onRead(ns.source, bytes.byteLength);
          return bytes;
        };
  // The SDK fills these results' hints from its per-method table; skills results get theirs per result. Read
  // per server: the policy follows the config running.
  const cacheHints = (listed = cache.listed) => ({
    'resources/list': listed,
    'resources/templates/list': listed,
    'prompts/list': listed,
    'tools/list': listed,
  });
  // One per factory: the one run at a time and the spent tokens hold across every server it makes. It plans
  // over every source; a caller reaches a skill only through its own view.
  const runner = createRunner(options.run ?? NOTHING_RUNS(), { catalog: options.catalog, read, logger });
  const tools = options.tools !== false;
  const prompts = options.prompts !== false;
  const maxPrompts = options.maxPrompts ?? DEFAULT_MAX_PROMPTS;
  // One per visibility: the configured principals and scope sets bound how many there are.
  const owner = options.serving ?? createServingOwner(options.catalog, { pageSize: options.pageSize });
  const callers = new Map<string, Caller>();
  const servingFor = (visibility: Visibility): Caller => {
    let serving = callers.get(visibility.key);
    if (serving === undefined) {
      const catalog = visibleCatalog(options.catalog, visibility);
      const current = () => owner.at(visibility);
      const source = catalogSkillSource(current, { read });
      const extension = new SkillsExtension({
        source,
        onWarning: (warning) => logger.warn({ path: warning.path }, warning.message),
      });
      callers.set(visibility.key, (serving = { catalog, current, source, extension }));
    }
    return serving;
  };

  const make = (surface: Surface, { current, source, extension }: Caller, caller: string): McpServer => {
    const mcp = new McpServer(
      { name: SERVER_NAME, version: SERVER_VERSION },
      { capabilities: { resources: { listChanged: true } }, cacheHints: cacheHints() },
    );
    if (surface.skills) {
      extension.attach(mcp);
      answerFromSnapshots(mcp, current, source, cache);
    }
    if (tools && surface.tools)
      registerTools(mcp, {
        serving: current,
        read,
        runner,
        caller,
        maxPrompts: prompts ? maxPrompts : undefined,
      });
    if (prompts && surface.prompts) registerPrompts(mcp, current, read, maxPrompts);
    return mcp;
  };

  const factory: ServerFactory = (context) => {
    const serving = servingFor(visibilityOf(context));
    const mcp = make(surfaceFor(context), serving, principalOf(context));
    // HTTP servers are told of changes by the HTTP layer (its sessions, subscriptions/listen); a stdio
    // connection is told here, for as long as it is open.
    if (context?.requestInfo === undefined) {
      const unsubscribe = serving.catalog.onChange((previous, next) => {
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
  factory.answerDirect = (request, body, authInfo) => {
    const { current, source } = servingFor(visibilityOf({ authInfo }));
    return answerDirect({ current, source, search: tools }, cache, request, body);
  };
  return factory;
}
