import { randomUUID } from 'node:crypto';
import {
  type AuthInfo,
  createMcpHandler,
  isLegacyRequest,
  type McpHttpHandler,
  WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server';
import {
  type CatalogState,
  EVERY_SOURCE,
  listingChanged,
  type Visibility,
  visibleState,
} from '../catalog/index.ts';
import { type Caller, callerOf } from '../mcp/caller.ts';
import type { Logger } from '../shared/log.ts';
import { expectPage, fill } from '../mcp/pageBytes.ts';
import { isModernProtocol } from '../mcp/protocol.ts';
import { announceListChanged, type ServerFactory } from '../mcp/server.ts';
import { createSessionStore, DEFAULT_SESSION_LIMITS, type SessionLimits } from './sessions.ts';

/** Methods /mcp serves: POST for every message, GET and DELETE for 2025-11-25 sessions (stream, end). */
export const MCP_METHODS = ['POST', 'GET', 'DELETE'] as const;

export interface McpEndpointOptions {
  factory: ServerFactory;
  logger: Logger;
  limits?: Partial<SessionLimits>;
  now?: () => number;
}

export interface McpEndpoint {
  /** Serves one request to /mcp from `peer` (the client's address), as `authInfo`'s caller when auth is on. */
  handle(request: Request, peer: string, authInfo?: AuthInfo): Promise<Response>;
  /** Tells every listening client whose listing differs between the two catalog states. */
  listingChanged(previous: CatalogState, next: CatalogState): void;
  /** Closes idle sessions; run it now and then. */
  expireSessions(): Promise<void>;
  /** How many 2025-11-25 sessions are open. */
  openSessions(): number;
  close(): Promise<void>;
}

const rpcError = (status: number, code: number, message: string, headers: Record<string, string> = {}) =>
  Response.json({ jsonrpc: '2.0', error: { code, message }, id: null }, { status, headers });

/** Spec (2025-11-25 transports): a session the server does not hold is a 404, and the client starts a new one. */
export const SESSION_NOT_FOUND =
  'Session not found: this server holds no session with this Mcp-Session-Id (it expired or was closed, or the ' +
  'request reached another replica: 2025-11-25 sessions need session affinity); start a new session with initialize';

/** One skills/list request (not a batch): the one answer whose entries pageBytes.ts may fill. */
const isListing = (body: unknown) =>
  typeof body === 'object' && body !== null && (body as { method?: unknown }).method === 'skills/list';

/** A session is used only by the caller that opened it, seeing the same sources. */
const sameCaller = (a: Caller | undefined, b: Caller | undefined) =>
  a === b || (a !== undefined && b !== undefined && a.id === b.id && a.visibility.key === b.visibility.key);

/**
 * Streamable HTTP at /mcp: 2026-07-28 requests are served statelessly by a server made for each, 2025-11-25
 * clients get sessions, on the same path. The body is read and parsed once, for routing and serving both.
 */
export function createMcpEndpoint(options: McpEndpointOptions): McpEndpoint {
  const { factory, logger } = options;
  const onerror = (error: Error) => logger.debug({ err: error.message }, 'mcp http');
  // One modern handler per visibility: subscriptions/listen streams hear only of changes their caller can see.
  const modern = new Map<string, { handler: McpHttpHandler; visibility: Visibility }>();
  const modernFor = (visibility: Visibility): McpHttpHandler => {
    let entry = modern.get(visibility.key);
    if (entry === undefined) {
      entry = { handler: createMcpHandler(factory, { legacy: 'reject', onerror }), visibility };
      modern.set(visibility.key, entry);
    }
    return entry.handler;
  };
  const store = createSessionStore({ ...DEFAULT_SESSION_LIMITS, ...options.limits }, options.now);

  const openSession = async (
    request: Request,
    parsedBody: unknown,
    peer: string,
    authInfo: AuthInfo | undefined,
  ): Promise<Response> => {
    const refused = await store.admit(peer);
    if (refused !== undefined) {
      logger.warn({ peer, status: refused.status }, refused.message);
      return rpcError(refused.status, -32000, refused.message, {
        'retry-after': String(refused.retryAfterSeconds),
      });
    }
    try {
      const server = factory({
        era: 'legacy',
        requestInfo: request,
        ...(authInfo === undefined ? {} : { authInfo }),
      });
      const caller = callerOf(authInfo);
      const transport: WebStandardStreamableHTTPServerTransport =
        new WebStandardStreamableHTTPServerTransport({
          sessionIdGenerator: randomUUID,
          onsessioninitialized: (id) =>
            store.add(id, { transport, server, address: peer, ...(caller === undefined ? {} : { caller }) }),
          onsessionclosed: (id) => store.remove(id),
        });
      transport.onclose = () => {
        if (transport.sessionId !== undefined) store.remove(transport.sessionId);
      };
      await server.connect(transport);
      const response = await transport.handleRequest(request, {
        parsedBody,
        ...(authInfo === undefined ? {} : { authInfo }),
      });
      if (transport.sessionId === undefined) await server.close();
      return response;
    } finally {
      store.settle(peer);
    }
  };

  const legacy = (
    request: Request,
    parsedBody: unknown,
    peer: string,
    authInfo: AuthInfo | undefined,
  ): Promise<Response> | Response => {
    const id = request.headers.get('mcp-session-id');
    if (id === null)
      return request.method === 'POST'
        ? openSession(request, parsedBody, peer, authInfo)
        : rpcError(400, -32000, 'Bad Request: Mcp-Session-Id header is required');
    const session = store.use(id);
    // Another caller's session answers as one that does not exist: ids are never confirmed to strangers.
    return session === undefined || !sameCaller(session.caller, callerOf(authInfo))
      ? rpcError(404, -32001, SESSION_NOT_FOUND)
      : session.transport.handleRequest(request, {
          parsedBody,
          ...(authInfo === undefined ? {} : { authInfo }),
        });
  };

  return {
    async handle(request, peer, authInfo) {
      let parsedBody: unknown;
      if (request.method === 'POST') {
        try {
          parsedBody = JSON.parse(await request.text());
        } catch {
          return rpcError(400, -32700, 'Parse error: the request body is not valid JSON');
        }
      }
      const serveModern = async () => {
        // A listing page's entries are bytes serialized once (pageBytes.ts): the SDK answers around them.
        const slot = isListing(parsedBody) ? expectPage(request) : undefined;
        const response = await modernFor(callerOf(authInfo)?.visibility ?? EVERY_SOURCE).fetch(request, {
          parsedBody,
          ...(authInfo === undefined ? {} : { authInfo }),
        });
        return slot === undefined ? response : fill(response, slot);
      };
      // A 2026-07-28 client names its revision on every request, a 2025-11-25 one never names a later one.
      if (isModernProtocol(request.headers.get('mcp-protocol-version'))) return serveModern();
      return (await isLegacyRequest(request, parsedBody))
        ? legacy(request, parsedBody, peer, authInfo)
        : serveModern();
    },
    listingChanged(previous, next) {
      const changed = new Map<string, boolean>();
      const changedFor = (visibility: Visibility) => {
        let seen = changed.get(visibility.key);
        if (seen === undefined) {
          seen = listingChanged(visibleState(previous, visibility), visibleState(next, visibility));
          changed.set(visibility.key, seen);
        }
        return seen;
      };
      // 2026-07-28 clients listen through subscriptions/listen; 2025-11-25 sessions are told directly.
      for (const { handler, visibility } of modern.values())
        if (changedFor(visibility)) {
          handler.notify.resourcesChanged();
          handler.notify.promptsChanged();
        }
      for (const session of store.sessions())
        if (changedFor(session.caller?.visibility ?? EVERY_SOURCE)) announceListChanged(session.server);
    },
    expireSessions: () => store.expire(),
    openSessions: () => [...store.sessions()].length,
    async close() {
      await store.closeAll();
      await Promise.all([...modern.values()].map(({ handler }) => handler.close()));
    },
  };
}
