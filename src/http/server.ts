import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  hostHeaderValidationResponse,
  localhostAllowedHostnames,
  localhostAllowedOrigins,
  originValidationResponse,
} from '@modelcontextprotocol/server';
import { type Catalog, EVERY_SOURCE, type Visibility } from '../catalog/index.ts';
import type { SourceConfig } from '../config/index.ts';
import type { Logger } from '../shared/log.ts';
import type { ServerFactory } from '../mcp/server.ts';
import type { StatusReport } from '../sync/status.ts';
import type { AuthGate, Authenticated } from './auth/gate.ts';
import { createDeliveryLog } from './deliveries.ts';
import { type BodyLimits, DEFAULT_BODY_LIMITS, MAX_REQUEST_BODY_BYTES } from './bodyBudget.ts';
import { type Admitted, type Gate, peerOf, requestListener } from './listener.ts';
import { createMcpEndpoint, MCP_METHODS } from './mcpEndpoint.ts';
import { METRICS_PATH, type Metrics } from './metrics.ts';
import type { SessionLimits } from './sessions.ts';
import { listedSkillNames, pageSearch, withSearchStats } from './search.ts';
import { renderStatusPage, STATUS_PAGE_HEADERS } from './statusPage.ts';
import { handleWebhook, refuseUnsigned, WEBHOOK_PATH, type WebhookOutcome } from './webhooks.ts';

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
  /** The sources webhooks match, or how to get them now (they change when the config is reloaded). */
  sources?: readonly SourceConfig[] | (() => readonly SourceConfig[]);
  /** The live status for GET /status (404 without it). */
  status?: () => StatusReport;
  /** Sources not tried yet: GET /readyz answers 503 until there are none. */
  pending?: () => readonly string[];
  /** Serves GET /metrics (404 without it) and counts what this server does. */
  metrics?: Metrics;
  /** Overrides of the limits on request bodies (tests). */
  bodyLimits?: Partial<BodyLimits>;
  /** Overrides of the session limits (tests). */
  sessionLimits?: Partial<SessionLimits>;
  /** The clock of sessions and webhook deliveries (tests). */
  now?: () => number;
  /** Authentication (`auth:`): every path but /healthz, /readyz, the webhook and the metadata document. */
  auth?: AuthGate;
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

/** The methods each path serves. */
const ROUTES: Record<string, readonly string[]> = {
  '/': ['GET', 'HEAD'],
  [MCP_PATH]: MCP_METHODS,
  '/healthz': ['GET', 'HEAD'],
  '/readyz': ['GET', 'HEAD'],
  '/status': ['GET', 'HEAD'],
  [METRICS_PATH]: ['GET', 'HEAD'],
  [WEBHOOK_PATH]: ['POST'],
};

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

/** The status report as one caller may see it: its sources and their failures. */
export function visibleStatus(report: StatusReport, visibility: Visibility): StatusReport {
  if (visibility.all) return report;
  // A ref of a `refs:` source is seen by whoever sees that source.
  const groupOf = new Map(report.sources.map((source) => [source.id, source.group]));
  const sees = (id: string) => visibility.has(id) || visibility.has(groupOf.get(id) ?? id);
  return {
    ...report,
    sources: report.sources.filter((source) => sees(source.id)),
    failures: report.failures.filter((failure) => sees(failure.id)),
  };
}

const methodNotAllowed = (method: string, allowed: readonly string[]) =>
  json(
    405,
    { error: `${method} is not served here; use ${allowed.join(', ')}` },
    { allow: allowed.join(', ') },
  );

/**
 * Streamable HTTP at /mcp, the status page at /, /healthz, /readyz, /status, /metrics and the webhook. Host and
 * Origin are checked first (DNS rebinding protection), then the method, then (with auth) the caller, all from the
 * request's head: only then is its body read (listener.ts bounds it).
 */
export async function startHttpServer(options: HttpOptions): Promise<RunningHttpServer> {
  const { auth } = options;
  const routes: Record<string, readonly string[]> = {
    ...ROUTES,
    ...Object.fromEntries((auth?.metadataPaths ?? []).map((path) => [path, ['GET', 'HEAD']])),
  };
  const hostname = bracketed(options.host);
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

  const { logger, metrics } = options;
  const statusNow = (status: () => StatusReport) => withSearchStats(status(), options.catalog);
  metrics?.countSessions(() => mcp.openSessions());

  /** What a request may do, from its head alone: Host and Origin, path, method, then (with auth) its caller. */
  const gate: Gate = async (head) => {
    const { pathname } = new URL(head.url);
    const rejected =
      hostHeaderValidationResponse(head, allowedHosts) ?? originValidationResponse(head, allowedOrigins);
    if (rejected !== undefined) {
      logger.warn(
        { host: clip(head.headers.get('host')), origin: clip(head.headers.get('origin')), path: pathname },
        'refused a request whose Host or Origin is not allowed (http.allowedHosts, http.allowedOrigins)',
      );
      return rejected;
    }
    const allowed = routes[pathname];
    if (allowed === undefined) return json(404, { error: `not found; MCP is served at ${MCP_PATH}` });
    if (!allowed.includes(head.method)) return methodNotAllowed(head.method, allowed);
    if (auth?.metadataPaths.includes(pathname)) return auth.metadata(head);
    if (pathname === WEBHOOK_PATH) return webhookGate(head);
    // Every path that is not open needs a caller; its answers are what that caller may see.
    let caller: Authenticated | undefined;
    if (auth !== undefined && !OPEN_PATHS.has(pathname)) {
      const verdict = await auth.authenticate(head, peerOf(head));
      if (verdict instanceof Response) return verdict;
      caller = verdict;
    }
    return { maxBodyBytes: MAX_REQUEST_BODY_BYTES, serve: (request) => serve(request, pathname, caller) };
  };

  /** A webhook delivery may send its body when webhooks are on and its headers carry a secret or a signature. */
  const webhookGate = (head: Request): Response | Admitted => {
    const { webhook, worker } = options;
    if (webhook === undefined || worker === undefined)
      return json(404, { error: 'webhooks are not configured (webhook.secret)' });
    const webhookOptions = {
      secret: webhook.secret,
      sources: (typeof options.sources === 'function' ? options.sources() : options.sources) ?? [],
      trigger: (id: string, why: string) => worker.trigger(id, why),
      deliveries,
      logger,
      ...(metrics === undefined
        ? {}
        : { onOutcome: (outcome: WebhookOutcome) => metrics.delivered(outcome) }),
    };
    return (
      refuseUnsigned(head.headers, webhookOptions) ?? {
        maxBodyBytes: webhook.maxBodyBytes,
        onTooLarge: () => metrics?.delivered('too_large'),
        serve: (request) => handleWebhook(request, webhookOptions),
      }
    );
  };

  const serve = async (request: Request, pathname: string, caller: Authenticated | undefined) => {
    const visibility = caller?.caller.visibility ?? EVERY_SOURCE;
    if (pathname === '/') {
      if (options.status === undefined) return json(404, { error: 'no status here' });
      const query = new URL(request.url).searchParams.get('q')?.trim() ?? '';
      const page = renderStatusPage(visibleStatus(statusNow(options.status), visibility), {
        mcpUrl: new URL(MCP_PATH, request.url).href,
        now: (options.now ?? Date.now)(),
        metrics: metrics !== undefined,
        search: query === '' ? undefined : await pageSearch(options.catalog, visibility, query),
        skillNames: listedSkillNames(options.catalog, visibility),
      });
      return new Response(page, { headers: STATUS_PAGE_HEADERS });
    }
    if (pathname === METRICS_PATH) {
      if (metrics === undefined) return json(404, { error: 'metrics are off; set http.metrics: true' });
      // Metrics name every source (and when each is read): only a caller allowed every source reads them.
      if (!visibility.all) return json(403, { error: METRICS_FORBIDDEN });
      return new Response(await metrics.render(), { headers: { 'content-type': metrics.contentType } });
    }
    if (pathname === '/healthz') {
      const state = options.catalog.state;
      // Open to anyone: with auth on it names no source, only how many and why.
      return json(200, {
        status: state.failures.length === 0 ? 'ok' : 'degraded',
        // Sources with a commit served, and sources whose latest sync failed (some of them still serve one).
        serving: state.sources.length,
        failing: state.failures.length,
        failures: state.failures.map((f) =>
          auth === undefined ? { id: f.id, reason: f.reason } : { reason: f.reason },
        ),
      });
    }
    if (pathname === '/readyz') {
      // 503 until every source was tried once: a replica joins its load balancer with all it can serve.
      const pending = options.pending?.() ?? [];
      return json(pending.length === 0 ? 200 : 503, {
        ready: pending.length === 0,
        pending: auth === undefined ? pending : pending.length,
      });
    }
    if (pathname === '/status')
      return options.status === undefined
        ? json(404, { error: 'no status here' })
        : json(200, visibleStatus(statusNow(options.status), visibility));
    return mcp.handle(request, peerOf(request), caller?.authInfo);
  };

  const unsubscribe = options.catalog.onChange((previous, next) => mcp.listingChanged(previous, next));

  const listener = requestListener({
    gate,
    methodsOf: (pathname) => routes[pathname],
    methodNotAllowed,
    limits: { ...DEFAULT_BODY_LIMITS, ...options.bodyLimits },
    // One line per request at debug: the path only (a query may carry a secret).
    onAnswer: (method, pathname, status, ms) =>
      logger.debug({ method, path: clip(pathname), status, ms: Math.round(ms) }, 'http request'),
    onerror: (error) => logger.error({ err: error.message }, 'http handler failed'),
  });
  const server: Server = createServer(listener);
  // `Expect: 100-continue` is answered by the listener once the head is allowed, not by Node before it looks.
  server.on('checkContinue', listener);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port, options.host, () => resolve());
    });
  } catch (error) {
    unsubscribe();
    await mcp.close();
    throw new ListenError(options.host, options.port, error);
  }
  const sweep = setInterval(() => void mcp.expireSessions(), SESSION_SWEEP_MS);
  sweep.unref();
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${clientHostname(options.host)}:${port}${MCP_PATH}`,
    listening: `${hostname}:${port}`,
    async close() {
      clearInterval(sweep);
      unsubscribe();
      await mcp.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
