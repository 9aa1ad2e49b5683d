import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  createMcpHandler,
  hostHeaderValidationResponse,
  isLegacyRequest,
  localhostAllowedHostnames,
  localhostAllowedOrigins,
  originValidationResponse,
  WebStandardStreamableHTTPServerTransport,
  type McpServer,
} from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { listingChanged, type Catalog } from '../catalog/index.ts';
import type { SourceConfig } from '../config/index.ts';
import type { Logger } from '../shared/log.ts';
import type { StatusReport } from '../sync/status.ts';
import { handleWebhook, WEBHOOK_PATH } from './webhooks.ts';

export const MCP_PATH = '/mcp';
/** Open 2025-11-25 sessions at most; the oldest is closed to make room. */
export const MAX_LEGACY_SESSIONS = 256;

export interface HttpOptions {
  host: string;
  port: number;
  factory: () => McpServer;
  catalog: Catalog;
  logger: Logger;
  allowedHosts?: string[];
  allowedOrigins?: string[];
  /** Syncs a source now (webhooks). */
  worker?: { trigger(id: string, why: string): unknown };
  webhook?: { secret: string; maxBodyBytes: number };
  sources?: readonly SourceConfig[];
  /** The live status for GET /status (404 without it). */
  status?: () => StatusReport;
  /** Sources not tried yet: GET /readyz answers 503 until there are none. */
  pending?: () => readonly string[];
}

/** The port could not be opened (in use, not allowed): one line for the user, no stack. */
export class ListenError extends Error {
  constructor(host: string, port: number, cause: unknown) {
    const code = (cause as NodeJS.ErrnoException).code;
    const why =
      code === 'EADDRINUSE'
        ? 'the address is already in use'
        : code === 'EACCES'
          ? 'permission denied'
          : code === 'EADDRNOTAVAIL'
            ? 'the address is not available on this machine'
            : (cause as Error).message;
    super(`cannot listen on ${host}:${port}: ${why}${code === undefined ? '' : ` (${code})`}`, { cause });
    this.name = 'ListenError';
  }
}

export interface RunningHttpServer {
  url: string;
  close(): Promise<void>;
}

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
const rpcError = (status: number, code: number, message: string) =>
  json(status, { jsonrpc: '2.0', error: { code, message }, id: null });

/**
 * Streamable HTTP at /mcp: 2026-07-28 requests are served statelessly, 2025-11-25 clients get sessions, on the
 * same port. Host and Origin are checked first (DNS rebinding protection).
 */
export async function startHttpServer(options: HttpOptions): Promise<RunningHttpServer> {
  const hostname =
    options.host.includes(':') && !options.host.startsWith('[') ? `[${options.host}]` : options.host;
  const allowedHosts = [
    ...new Set([...localhostAllowedHostnames(), hostname, ...(options.allowedHosts ?? [])]),
  ];
  const allowedOrigins = [...new Set([...localhostAllowedOrigins(), ...(options.allowedOrigins ?? [])])];
  const onerror = (error: Error) => options.logger.debug({ err: error.message }, 'mcp http');
  const modern = createMcpHandler(options.factory, { legacy: 'reject', onerror });
  const sessions = new Map<
    string,
    { transport: WebStandardStreamableHTTPServerTransport; server: McpServer }
  >();

  const legacy = async (request: Request): Promise<Response> => {
    const id = request.headers.get('mcp-session-id');
    if (id !== null) {
      const session = sessions.get(id);
      return session === undefined
        ? rpcError(404, -32001, 'Session not found')
        : session.transport.handleRequest(request);
    }
    if (sessions.size >= MAX_LEGACY_SESSIONS) {
      const [oldest] = sessions.values();
      await oldest?.transport.close();
    }
    const server = options.factory();
    const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sessionId) => void sessions.set(sessionId, { transport, server }),
      onsessionclosed: (sessionId) => void sessions.delete(sessionId),
    });
    transport.onclose = () => {
      if (transport.sessionId !== undefined) sessions.delete(transport.sessionId);
    };
    await server.connect(transport);
    const response = await transport.handleRequest(request);
    if (transport.sessionId === undefined) await server.close();
    return response;
  };

  const route = async (request: Request): Promise<Response> => {
    const { pathname } = new URL(request.url);
    const rejected =
      hostHeaderValidationResponse(request, allowedHosts) ??
      originValidationResponse(request, allowedOrigins);
    if (rejected !== undefined) return rejected;
    if (pathname === '/healthz') {
      const state = options.catalog.state;
      return json(200, {
        status: state.failures.length === 0 ? 'ok' : 'degraded',
        sources: state.sources.length,
        failures: state.failures.map((f) => ({ id: f.id, reason: f.reason })),
      });
    }
    if (pathname === '/readyz') {
      // 503 until every source was tried once: a replica joins its load balancer with all it can serve.
      const pending = options.pending?.() ?? [];
      return json(pending.length === 0 ? 200 : 503, { ready: pending.length === 0, pending });
    }
    if (pathname === '/status')
      return options.status === undefined
        ? json(404, { error: 'no status here' })
        : json(200, options.status());
    if (pathname === WEBHOOK_PATH) {
      const { webhook, worker } = options;
      if (webhook === undefined || worker === undefined)
        return json(404, { error: 'webhooks are not configured (webhook.secret)' });
      return handleWebhook(request, {
        ...webhook,
        sources: options.sources ?? [],
        trigger: (id, why) => worker.trigger(id, why),
        logger: options.logger,
      });
    }
    if (pathname !== MCP_PATH) return json(404, { error: `not found; MCP is served at ${MCP_PATH}` });
    return (await isLegacyRequest(request)) ? legacy(request) : modern.fetch(request);
  };

  // 2026-07-28 clients listen through subscriptions/listen on the handler; stdio and 2025-11-25 sessions are
  // told by the server factory, which tracks the servers it made.
  const unsubscribe = options.catalog.onChange((previous, next) => {
    if (!listingChanged(previous, next)) return;
    modern.notify.resourcesChanged();
    modern.notify.promptsChanged();
  });

  const nodeHandler = toNodeHandler(
    { fetch: route },
    { onerror: (error) => options.logger.error({ err: error.message }, 'http handler failed') },
  );
  const server: Server = createServer((req, res) => void nodeHandler(req, res));
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port, options.host, () => resolve());
    });
  } catch (error) {
    unsubscribe();
    await modern.close();
    throw new ListenError(options.host, options.port, error);
  }
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${hostname}:${port}${MCP_PATH}`,
    async close() {
      unsubscribe();
      await Promise.all([...sessions.values()].map(({ transport }) => transport.close()));
      await modern.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
