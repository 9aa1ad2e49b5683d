import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  hostHeaderValidationResponse,
  localhostAllowedHostnames,
  localhostAllowedOrigins,
  originValidationResponse,
} from '@modelcontextprotocol/server';
import { listingChanged, type Catalog, type Namespace } from '../catalog/index.ts';
import type { SourceConfig } from '../config/index.ts';
import type { Logger } from '../shared/log.ts';
import type { ServerFactory } from '../mcp/server.ts';
import { createDeliveryLog } from './deliveries.ts';
import { peerOf, requestListener, type Route } from './listener.ts';
import { createMcpEndpoint, MCP_METHODS } from './mcpEndpoint.ts';
import type { SessionLimits } from './sessions.ts';
import { handleWebhook, WEBHOOK_PATH } from './webhooks.ts';

export const MCP_PATH = '/mcp';
/** How often idle 2025-11-25 sessions are looked for. */
export const SESSION_SWEEP_MS = 60_000;

export interface HttpOptions {
  host: string;
  port: number;
  factory: ServerFactory;
  catalog: Catalog;
  logger: Logger;
  allowedHosts?: string[];
  allowedOrigins?: string[];
  /** Syncs a source now (webhooks). */
  worker?: { trigger(id: string, why: string): unknown };
  webhook?: { secret: string; maxBodyBytes: number };
  sources?: readonly SourceConfig[];
  /** Overrides of the session limits (tests). */
  sessionLimits?: Partial<SessionLimits>;
  /** The clock of sessions and webhook deliveries (tests). */
  now?: () => number;
}

export interface RunningHttpServer {
  url: string;
  close(): Promise<void>;
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });

/** The methods each path serves. */
const ROUTES: Record<string, readonly string[]> = {
  [MCP_PATH]: MCP_METHODS,
  '/healthz': ['GET', 'HEAD'],
  '/status': ['GET', 'HEAD'],
  [WEBHOOK_PATH]: ['POST'],
};

const methodNotAllowed = (method: string, allowed: readonly string[]) =>
  json(
    405,
    { error: `${method} is not served here; use ${allowed.join(', ')}` },
    { allow: allowed.join(', ') },
  );

/** Every served commit with its problems, and every source that failed: the live view of the catalog. */
export function statusOf(catalog: Catalog) {
  const { sources, failures } = catalog.state;
  const commit = (ns: Namespace) => ({
    commit: ns.commit,
    commitTime: ns.commitTime,
    repository: ns.origin.repository,
    skills: ns.skills.length,
    problems: ns.problems,
  });
  return {
    version: 1,
    sources: sources.map((source) => ({
      id: source.id,
      current: commit(source.current),
      retained: source.retained.map(commit),
    })),
    failures,
  };
}

/**
 * Streamable HTTP at /mcp, /healthz, /status and the webhook. Host and Origin are checked first (DNS rebinding
 * protection), then the method.
 */
export async function startHttpServer(options: HttpOptions): Promise<RunningHttpServer> {
  const hostname =
    options.host.includes(':') && !options.host.startsWith('[') ? `[${options.host}]` : options.host;
  const allowedHosts = [
    ...new Set([...localhostAllowedHostnames(), hostname, ...(options.allowedHosts ?? [])]),
  ];
  const allowedOrigins = [...new Set([...localhostAllowedOrigins(), ...(options.allowedOrigins ?? [])])];
  const mcp = createMcpEndpoint({
    factory: options.factory,
    logger: options.logger,
    ...(options.sessionLimits === undefined ? {} : { limits: options.sessionLimits }),
    ...(options.now === undefined ? {} : { now: options.now }),
  });
  const deliveries = createDeliveryLog(options.now);

  const route: Route = async (request) => {
    const { pathname } = new URL(request.url);
    const rejected =
      hostHeaderValidationResponse(request, allowedHosts) ??
      originValidationResponse(request, allowedOrigins);
    if (rejected !== undefined) return rejected;
    const allowed = ROUTES[pathname];
    if (allowed === undefined) return json(404, { error: `not found; MCP is served at ${MCP_PATH}` });
    if (!allowed.includes(request.method)) return methodNotAllowed(request.method, allowed);
    if (pathname === '/healthz') {
      const state = options.catalog.state;
      return json(200, {
        status: state.failures.length === 0 ? 'ok' : 'degraded',
        sources: state.sources.length,
        failures: state.failures.map((f) => ({ id: f.id, reason: f.reason })),
      });
    }
    if (pathname === '/status') return json(200, statusOf(options.catalog));
    if (pathname === WEBHOOK_PATH) {
      const { webhook, worker } = options;
      if (webhook === undefined || worker === undefined)
        return json(404, { error: 'webhooks are not configured (webhook.secret)' });
      return handleWebhook(request, {
        secret: webhook.secret,
        sources: options.sources ?? [],
        trigger: (id, why) => worker.trigger(id, why),
        deliveries,
        logger: options.logger,
      });
    }
    return mcp.handle(request, peerOf(request));
  };

  const unsubscribe = options.catalog.onChange((previous, next) => {
    if (listingChanged(previous, next)) mcp.listingChanged();
  });

  const server: Server = createServer(
    requestListener({
      route,
      methodsOf: (pathname) => ROUTES[pathname],
      methodNotAllowed,
      ...(options.webhook === undefined
        ? {}
        : { webhook: { path: WEBHOOK_PATH, maxBodyBytes: options.webhook.maxBodyBytes } }),
      onerror: (error) => options.logger.error({ err: error.message }, 'http handler failed'),
    }),
  );
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const sweep = setInterval(() => void mcp.expireSessions(), SESSION_SWEEP_MS);
  sweep.unref();
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${hostname}:${port}${MCP_PATH}`,
    async close() {
      clearInterval(sweep);
      unsubscribe();
      await mcp.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
