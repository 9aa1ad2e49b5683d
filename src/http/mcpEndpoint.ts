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
import { isModernProtocol } from '../mcp/protocol.ts';
import { announceListChanged, type ServerFactory } from '../mcp/server.ts';
import {
  createSessionStore,
  DEFAULT_SESSION_LIMITS,
  type SessionLimits,
  type SessionStore,
} from './sessions.ts';

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
  /** `body`: the request's raw bytes, which `request` (its head) does not carry. */
  handle(request: Request, body: Uint8Array, peer: string, authInfo?: AuthInfo): Promise<Response>;
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

/** A session is used only by the caller that opened it, seeing the same sources. */
const sameCaller = (a: Caller | undefined, b: Caller | undefined) =>
  a === b || (a !== undefined && b !== undefined && a.id === b.id && a.visibility.key === b.visibility.key);
const utf8 = new TextDecoder();

/** One request to /mcp, its body parsed, from `peer`, as `authInfo`'s caller when auth is on. */
interface Incoming {
  request: Request;
  parsedBody: unknown;
  peer: string;
  authInfo: AuthInfo | undefined;
}

/**
 * A POST's body parsed as JSON (a GET or DELETE has none), or the -32700 answer when it is not JSON. Decoded as
 * `Request.text()` decodes: UTF-8, a leading BOM dropped, a malformed sequence replaced. The SDK is handed the
 * parsed body and reads none.
 */
function parseBody(method: string, body: Uint8Array): { parsed: unknown } | Response {
  if (method !== 'POST') return { parsed: undefined };
  try {
    return { parsed: JSON.parse(utf8.decode(body)) };
  } catch {
    return rpcError(400, -32700, 'Parse error: the request body is not valid JSON');
  }
}

/** 2026-07-28 handlers, one per visibility: subscriptions/listen streams hear only of changes their caller can see. */
type ModernHandlers = Map<string, { handler: McpHttpHandler; visibility: Visibility }>;

function modernHandlerFor(
  handlers: ModernHandlers,
  visibility: Visibility,
  make: () => McpHttpHandler,
): McpHttpHandler {
  let entry = handlers.get(visibility.key);
  if (entry === undefined) {
    entry = { handler: make(), visibility };
    handlers.set(visibility.key, entry);
  }
  return entry.handler;
}

/** A 2026-07-28 request, served statelessly by `handler`. */
const serveModern = (handler: McpHttpHandler, { request, parsedBody, authInfo }: Incoming) =>
  handler.fetch(request, { parsedBody, authInfo });

/** What 2025-11-25 sessions are made with and kept in. */
interface Sessions {
  factory: ServerFactory;
  logger: Logger;
  store: SessionStore;
}

/** A 2025-11-25 request: to the session it names, or (a POST naming none) to a new session. */
function serveLegacy(sessions: Sessions, incoming: Incoming): Promise<Response> | Response {
  const { request, parsedBody, authInfo } = incoming;
  const id = request.headers.get('mcp-session-id');
  if (id === null)
    return request.method === 'POST'
      ? openSession(sessions, incoming)
      : rpcError(400, -32000, 'Bad Request: Mcp-Session-Id header is required');
  const session = sessions.store.use(id);
  // Another caller's session answers as one that does not exist: ids are never confirmed to strangers.
  return session === undefined || !sameCaller(session.caller, callerOf(authInfo))
    ? rpcError(404, -32001, SESSION_NOT_FOUND)
    : session.transport.handleRequest(request, { parsedBody, authInfo });
}

/** A new session, when the store has room for one from this peer (429 or 503 with Retry-After when not). */
async function openSession(sessions: Sessions, incoming: Incoming): Promise<Response> {
  const { store, logger } = sessions;
  const { peer } = incoming;
  const refused = await store.admit(peer);
  if (refused !== undefined) {
    logger.warn({ peer, status: refused.status }, refused.message);
    return rpcError(refused.status, -32000, refused.message, {
      'retry-after': String(refused.retryAfterSeconds),
    });
  }
  try {
    return await connectSession(sessions, incoming);
  } finally {
    store.settle(peer);
  }
}

/** A server and transport for a new session, answering its first request; kept once the SDK names the session. */
async function connectSession(
  { factory, store }: Sessions,
  { request, parsedBody, peer, authInfo }: Incoming,
): Promise<Response> {
  const server = factory({ era: 'legacy', requestInfo: request, authInfo });
  const caller = callerOf(authInfo);
  const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: randomUUID,
    onsessioninitialized: (id) => store.add(id, { transport, server, address: peer, caller }),
    onsessionclosed: (id) => store.remove(id),
  });
  transport.onclose = () => {
    if (transport.sessionId !== undefined) store.remove(transport.sessionId);
  };
  await server.connect(transport);
  const response = await transport.handleRequest(request, { parsedBody, authInfo });
  if (transport.sessionId === undefined) await server.close();
  return response;
}

/** Whether the listing a visibility sees differs between two catalog states, worked out once per visibility. */
function listingChangeOf(previous: CatalogState, next: CatalogState): (visibility: Visibility) => boolean {
  const changed = new Map<string, boolean>();
  return (visibility) => {
    let seen = changed.get(visibility.key);
    if (seen === undefined) {
      seen = listingChanged(visibleState(previous, visibility), visibleState(next, visibility));
      changed.set(visibility.key, seen);
    }
    return seen;
  };
}

/**
 * Streamable HTTP at /mcp: 2026-07-28 requests are served statelessly by a server made for each, 2025-11-25
 * clients get sessions, on the same path. The body is read and parsed once, for routing and serving both.
 */
export function createMcpEndpoint(options: McpEndpointOptions): McpEndpoint {
  const { factory, logger } = options;
  const onerror = (error: Error) => logger.debug({ err: error.message }, 'mcp http');
  const modern: ModernHandlers = new Map();
  const modernFor = (authInfo: AuthInfo | undefined) =>
    modernHandlerFor(modern, callerOf(authInfo)?.visibility ?? EVERY_SOURCE, () =>
      createMcpHandler(factory, { legacy: 'reject', onerror }),
    );
  const store = createSessionStore({ ...DEFAULT_SESSION_LIMITS, ...options.limits }, options.now);
  const sessions: Sessions = { factory, logger, store };

  return {
    async handle(request, bytes, peer, authInfo) {
      const body = parseBody(request.method, bytes);
      if (body instanceof Response) return body;
      const incoming: Incoming = { request, parsedBody: body.parsed, peer, authInfo };
      // A 2026-07-28 client names its revision on every request, a 2025-11-25 one never names a later one.
      const legacy =
        !isModernProtocol(request.headers.get('mcp-protocol-version')) &&
        (await isLegacyRequest(request, body.parsed));
      if (legacy) return serveLegacy(sessions, incoming);
      // A lone skills/list, resources/read or skill_search is answered without a server where it can be
      // (mcp/handlers.ts).
      const direct = await factory.answerDirect?.(request, body.parsed, authInfo);
      return direct?.response ?? serveModern(modernFor(authInfo), incoming);
    },
    listingChanged(previous, next) {
      const changedFor = listingChangeOf(previous, next);
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
