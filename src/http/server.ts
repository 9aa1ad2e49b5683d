import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  hostHeaderValidationResponse,
  localhostAllowedHostnames,
  localhostAllowedOrigins,
  originValidationResponse,
} from '@modelcontextprotocol/server';
import { type Catalog, EVERY_SOURCE, type Visibility, visibleSources } from '../catalog/index.ts';
import type { SourceConfig } from '../config/index.ts';
import type { Logger } from '../shared/log.ts';
import type { ServerFactory } from '../mcp/server.ts';
import { createServingOwner, type ServingOwner } from '../mcp/serving.ts';
import type { StatusReport } from '../shared/status.ts';
import type { AuthGate, Authenticated } from './auth/gate.ts';
import { createDeliveryLog } from './deliveries.ts';
import { type BodyLimits, DEFAULT_BODY_LIMITS, MAX_REQUEST_BODY_BYTES } from './bodyBudget.ts';
import { withBody } from './body.ts';
import { type Admitted, type Gate, peerOf, requestListener } from './listener.ts';
import { createMcpEndpoint, MCP_METHODS, type McpEndpoint } from './mcpEndpoint.ts';
import { METRICS_PATH, type Metrics } from './metrics.ts';
import type { SessionLimits } from './sessions.ts';
import { listedSkillNames, pageSearch, withSearchStats } from './search.ts';
import { renderStatusPage, STATUS_PAGE_HEADERS } from './statusPage.ts';
import { handleWebhook, refuseUnsigned, WEBHOOK_PATH, type WebhookOutcome } from './webhooks.ts';

export const MCP_PATH = '/mcp';
/** How often idle 2025-11-25 sessions are looked for. */
export const SESSION_SWEEP_MS = 60_000;

export interface HttpOptions {
  /** Where to listen, and the Host and Origin values allowed besides loopback's (DNS rebinding protection). */
  listen: { host: string; port: number; allowedHosts?: string[]; allowedOrigins?: string[] };
  /** What is served: MCP from `factory` over `catalog`; the live status (GET / and /status, 404 without it);
   * the sources not tried yet (GET /readyz answers 503 until there are none); metrics (GET /metrics, 404 without). */
  serving: {
    factory: ServerFactory;
    catalog: Catalog;
    status?: () => StatusReport;
    /** What MCP serves over `catalog` (search indexes for the status page); absent: made here. */
    served?: ServingOwner;
    pending?: () => readonly string[];
    metrics?: Metrics;
  };
  /** Webhooks (POST /hooks/git, 404 without): the secret and body bound, the sources they match now (they change
   * when the config is reloaded), and what syncs a source now. */
  webhooks?: {
    secret: string;
    maxBodyBytes: number;
    sources: () => readonly SourceConfig[];
    worker: { trigger(id: string, why: string): unknown };
  };
  /** Authentication (`auth:`): every path but /healthz, /readyz, the webhook and the metadata document. */
  auth?: AuthGate;
  logger: Logger;
  /** Overrides of the limits on request bodies and sessions (tests). */
  limits?: { body?: Partial<BodyLimits>; sessions?: Partial<SessionLimits> };
  /** The clock of sessions and webhook deliveries (tests). */
  now?: () => number;
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
  /** The MCP endpoint as a client on this machine reaches it (a wildcard bind is named by loopback). */
  url: string;
  /** What the socket is bound to: `host:port`. */
  listening: string;
  close(): Promise<void>;
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });

/** Why a caller allowed only some sources gets no metrics. */
export const METRICS_FORBIDDEN =
  'metrics name every source; they are served to a caller allowed every source (a token or scope without sources:)';

const READ = ['GET', 'HEAD'] as const;

/** What a request may go on to, once its head is allowed: a caller (with auth), and what it may see. */
interface Asking {
  request: Request;
  /** The request's body (empty for GET and HEAD). */
  body: Uint8Array;
  caller: Authenticated | undefined;
  visibility: Visibility;
}

/**
 * One path: the methods it serves, and either `serve`, which answers once the body is read (with auth, for the
 * caller it names, unless the path is one of OPEN_PATHS), or `admit`, which decides from the head alone.
 */
type Route = { methods: readonly string[] } & (
  | { serve: (asking: Asking) => Response | Promise<Response> }
  | { admit: (head: Request) => Response | Admitted | Promise<Response | Admitted> }
);

/** A host as a URL and a Host header name it: an IPv6 address in brackets. */
const bracketed = (host: string) => (host.includes(':') && !host.startsWith('[') ? `[${host}]` : host);

/** A bound host as a client names it: the wildcard addresses are reached through loopback. */
function clientHostname(host: string): string {
  if (host === '0.0.0.0' || host === '') return '127.0.0.1';
  if (host === '::' || host === '[::]') return '[::1]';
  return bracketed(host);
}

/** A header value fit for a log line: hostile, so cut short. */
const clip = (value: string | null) => (value === null ? null : value.slice(0, 200));

/** Paths anyone may call: probes (they name no source when auth is on) and webhooks (their own secrets). */
export const OPEN_PATHS: ReadonlySet<string> = new Set(['/healthz', '/readyz', WEBHOOK_PATH]);

const methodNotAllowed = (method: string, allowed: readonly string[]) =>
  json(
    405,
    { error: `${method} is not served here; use ${allowed.join(', ')}` },
    { allow: allowed.join(', ') },
  );

/** The status page (`GET /?q=` searches what the caller may see), as a route of the table below. */
function statusPage(options: HttpOptions, report: () => StatusReport, served: ServingOwner): Route {
  const { catalog, metrics } = options.serving;
  return {
    methods: READ,
    async serve({ request, visibility }) {
      const query = new URL(request.url).searchParams.get('q')?.trim() ?? '';
      const page = renderStatusPage(visibleSources(report(), visibility), {
        mcpUrl: new URL(MCP_PATH, request.url).href,
        now: (options.now ?? Date.now)(),
        metrics: metrics !== undefined,
        search: query === '' ? undefined : await pageSearch(served, visibility, query),
        skillNames: listedSkillNames(catalog, visibility),
      });
      return new Response(page, { headers: STATUS_PAGE_HEADERS });
    },
  };
}

/**
 * GET /healthz: open to anyone, so with auth on it says only whether every source syncs: how many there are, or
 * fail, would count sources a caller may not see.
 */
function healthz(options: HttpOptions): Route {
  return {
    methods: READ,
    serve() {
      const state = options.serving.catalog.state;
      const status = state.failures.length === 0 ? 'ok' : 'degraded';
      if (options.auth !== undefined) return json(200, { status });
      return json(200, {
        status,
        // Sources with a commit served, and sources whose latest sync failed (some of them still serve one).
        serving: state.sources.length,
        failing: state.failures.length,
        failures: state.failures.map((f) => ({ id: f.id, reason: f.reason })),
      });
    },
  };
}

/** GET /readyz: 503 until every source was tried once, so a replica joins its load balancer with all it serves. */
function readyz(options: HttpOptions): Route {
  return {
    methods: READ,
    serve() {
      const pending = options.serving.pending?.() ?? [];
      const ready = pending.length === 0;
      // With auth, nothing about the sources: a count would count those a caller may not see.
      return json(ready ? 200 : 503, options.auth === undefined ? { ready, pending } : { ready });
    },
  };
}

/** GET /metrics: they name every source (and when each is read), so only a caller allowed every source reads them. */
function metricsRoute(metrics: Metrics | undefined): Route {
  return {
    methods: READ,
    async serve({ visibility }) {
      if (metrics === undefined) return json(404, { error: 'metrics are off; set http.metrics: true' });
      if (!visibility.all) return json(403, { error: METRICS_FORBIDDEN });
      return new Response(await metrics.render(), { headers: { 'content-type': metrics.contentType } });
    },
  };
}

/** POST /hooks/git: a delivery may send its body when webhooks are on and its head carries a secret or signature. */
function webhookRoute(options: HttpOptions, deliveries: ReturnType<typeof createDeliveryLog>): Route {
  const { webhooks, logger } = options;
  const { metrics } = options.serving;
  return {
    methods: ['POST'],
    admit(head) {
      if (webhooks === undefined) return json(404, { error: 'webhooks are not configured (webhook.secret)' });
      const webhookOptions = {
        secret: webhooks.secret,
        sources: webhooks.sources(),
        trigger: (id: string, why: string) => webhooks.worker.trigger(id, why),
        deliveries,
        logger,
        onOutcome: (outcome: WebhookOutcome) => metrics?.delivered(outcome),
      };
      return (
        refuseUnsigned(head.headers, webhookOptions) ?? {
          maxBodyBytes: webhooks.maxBodyBytes,
          onTooLarge: () => metrics?.delivered('webhook-too-large'),
          serve: (request, body) => handleWebhook(withBody(request, body), webhookOptions),
        }
      );
    },
  };
}

/** The routes of one server: a table of paths, one small function each. */
function routeTable(options: HttpOptions, mcp: McpEndpoint): Record<string, Route> {
  const { auth } = options;
  const { catalog, metrics, status } = options.serving;
  const served = options.serving.served ?? createServingOwner(catalog);
  const report = status && (() => withSearchStats(status(), served));
  const noStatus: Route = { methods: READ, serve: () => json(404, { error: 'no status here' }) };
  return {
    '/': report === undefined ? noStatus : statusPage(options, report, served),
    [MCP_PATH]: {
      methods: MCP_METHODS,
      serve: ({ request, body, caller }) => mcp.handle(request, body, peerOf(request), caller?.authInfo),
    },
    '/healthz': healthz(options),
    '/readyz': readyz(options),
    '/status':
      report === undefined
        ? noStatus
        : { methods: READ, serve: ({ visibility }) => json(200, visibleSources(report(), visibility)) },
    [METRICS_PATH]: metricsRoute(metrics),
    [WEBHOOK_PATH]: webhookRoute(options, createDeliveryLog(options.now)),
    // The protected resource metadata documents (RFC 9728) answer from the head.
    ...Object.fromEntries(
      (auth?.metadataPaths ?? []).map((path): [string, Route] => [
        path,
        { methods: READ, admit: (head) => auth!.metadata(head) },
      ]),
    ),
  };
}

/**
 * DNS rebinding protection: a request whose Host or Origin is neither loopback's nor one configured is refused
 * (and logged); `undefined` lets it on.
 */
function hostCheck(listen: HttpOptions['listen'], logger: Logger): (head: Request) => Response | undefined {
  const allowedHosts = [
    ...new Set([...localhostAllowedHostnames(), bracketed(listen.host), ...(listen.allowedHosts ?? [])]),
  ];
  const allowedOrigins = [...new Set([...localhostAllowedOrigins(), ...(listen.allowedOrigins ?? [])])];
  return (head) => {
    const rejected =
      hostHeaderValidationResponse(head, allowedHosts) ?? originValidationResponse(head, allowedOrigins);
    if (rejected !== undefined)
      logger.warn(
        {
          host: clip(head.headers.get('host')),
          origin: clip(head.headers.get('origin')),
          path: new URL(head.url).pathname,
        },
        'refused a request whose Host or Origin is not allowed (http.allowedHosts, http.allowedOrigins)',
      );
    return rejected;
  };
}

/** What a request may do, from its head alone: Host and Origin, path, method, then (with auth) its caller. */
function gateOf(options: HttpOptions, routes: Record<string, Route>): Gate {
  const { auth } = options;
  const hostRefusal = hostCheck(options.listen, options.logger);
  return async (head) => {
    const rejected = hostRefusal(head);
    if (rejected !== undefined) return rejected;
    const { pathname } = new URL(head.url);
    const route = routes[pathname];
    if (route === undefined) return json(404, { error: `not found; MCP is served at ${MCP_PATH}` });
    if (!route.methods.includes(head.method)) return methodNotAllowed(head.method, route.methods);
    if ('admit' in route) return route.admit(head);
    // Every path that is not open needs a caller; its answers are what that caller may see.
    let caller: Authenticated | undefined;
    if (auth !== undefined && !OPEN_PATHS.has(pathname)) {
      const verdict = await auth.authenticate(head, peerOf(head));
      if (verdict instanceof Response) return verdict;
      caller = verdict;
    }
    const visibility = caller?.caller.visibility ?? EVERY_SOURCE;
    return {
      maxBodyBytes: MAX_REQUEST_BODY_BYTES,
      serve: async (request, body) => route.serve({ request, body, caller, visibility }),
    };
  };
}

/** A Node HTTP server answering through the gate and the route table; bodies are bounded by listener.ts. */
function createNodeServer(options: HttpOptions, routes: Record<string, Route>): Server {
  const { logger } = options;
  const listener = requestListener({
    gate: gateOf(options, routes),
    methodsOf: (pathname) => routes[pathname]?.methods,
    methodNotAllowed,
    limits: { ...DEFAULT_BODY_LIMITS, ...options.limits?.body },
    // One line per request at debug: the path only (a query may carry a secret).
    onAnswer: (method, pathname, status, ms) =>
      logger.debug({ method, path: clip(pathname), status, ms: Math.round(ms) }, 'http request'),
    onerror: (error) => logger.error({ err: error.message }, 'http handler failed'),
  });
  const server = createServer(listener);
  // `Expect: 100-continue` is answered by the listener once the head is allowed, not by Node before it looks.
  server.on('checkContinue', listener);
  return server;
}

/** Opens the port, or fails with a ListenError naming why. */
async function listenOn(server: Server, { host, port }: HttpOptions['listen']): Promise<void> {
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve());
    });
  } catch (error) {
    throw new ListenError(host, port, error);
  }
}

/**
 * Streamable HTTP at /mcp, the status page at /, /healthz, /readyz, /status, /metrics and the webhook: a table of
 * routes, one small function each. Host and Origin are checked first (DNS rebinding protection), then the path and
 * method, then (with auth) the caller, all from the request's head: only then is its body read (listener.ts
 * bounds it).
 */
export async function startHttpServer(options: HttpOptions): Promise<RunningHttpServer> {
  const { listen } = options;
  const { catalog, metrics } = options.serving;
  const mcp = createMcpEndpoint({
    factory: options.serving.factory,
    logger: options.logger,
    limits: options.limits?.sessions,
    now: options.now,
  });
  metrics?.countSessions(() => mcp.openSessions());
  const unsubscribe = catalog.onChange((previous, next) => mcp.listingChanged(previous, next));
  const server = createNodeServer(options, routeTable(options, mcp));
  try {
    await listenOn(server, listen);
  } catch (error) {
    unsubscribe();
    await mcp.close();
    throw error;
  }
  const sweep = setInterval(() => void mcp.expireSessions(), SESSION_SWEEP_MS);
  sweep.unref();
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${clientHostname(listen.host)}:${port}${MCP_PATH}`,
    listening: `${bracketed(listen.host)}:${port}`,
    async close() {
      clearInterval(sweep);
      unsubscribe();
      await mcp.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
