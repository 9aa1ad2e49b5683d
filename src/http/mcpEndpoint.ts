import { randomUUID } from 'node:crypto';
import {
  createMcpHandler,
  isLegacyRequest,
  WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server';
import type { Logger } from '../shared/log.ts';
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
  /** Serves one request to /mcp from `peer` (the client's address). */
  handle(request: Request, peer: string): Promise<Response>;
  /** Tells every listening client that the listing changed. */
  listingChanged(): void;
  /** Closes idle sessions; run it now and then. */
  expireSessions(): Promise<void>;
  /** How many 2025-11-25 sessions are open. */
  openSessions(): number;
  close(): Promise<void>;
}

const rpcError = (status: number, code: number, message: string, headers: Record<string, string> = {}) =>
  Response.json({ jsonrpc: '2.0', error: { code, message }, id: null }, { status, headers });

/**
 * Streamable HTTP at /mcp: 2026-07-28 requests are served statelessly by a server made for each, 2025-11-25
 * clients get sessions, on the same path. The body is read and parsed once, for routing and serving both.
 */
export function createMcpEndpoint(options: McpEndpointOptions): McpEndpoint {
  const { factory, logger } = options;
  const onerror = (error: Error) => logger.debug({ err: error.message }, 'mcp http');
  const modern = createMcpHandler(factory, { legacy: 'reject', onerror });
  const store = createSessionStore({ ...DEFAULT_SESSION_LIMITS, ...options.limits }, options.now);

  const openSession = async (request: Request, parsedBody: unknown, peer: string): Promise<Response> => {
    const refused = await store.admit(peer);
    if (refused !== undefined) {
      logger.warn({ peer, status: refused.status }, refused.message);
      return rpcError(refused.status, -32000, refused.message, {
        'retry-after': String(refused.retryAfterSeconds),
      });
    }
    try {
      const server = factory({ era: 'legacy', requestInfo: request });
      const transport: WebStandardStreamableHTTPServerTransport =
        new WebStandardStreamableHTTPServerTransport({
          sessionIdGenerator: randomUUID,
          onsessioninitialized: (id) => store.add(id, { transport, server }),
          onsessionclosed: (id) => store.remove(id),
        });
      transport.onclose = () => {
        if (transport.sessionId !== undefined) store.remove(transport.sessionId);
      };
      await server.connect(transport);
      const response = await transport.handleRequest(request, { parsedBody });
      if (transport.sessionId === undefined) await server.close();
      return response;
    } finally {
      store.settle();
    }
  };

  const legacy = (request: Request, parsedBody: unknown, peer: string): Promise<Response> | Response => {
    const id = request.headers.get('mcp-session-id');
    if (id === null)
      return request.method === 'POST'
        ? openSession(request, parsedBody, peer)
        : rpcError(400, -32000, 'Bad Request: Mcp-Session-Id header is required');
    const session = store.use(id);
    return session === undefined
      ? rpcError(404, -32001, 'Session not found')
      : session.transport.handleRequest(request, { parsedBody });
  };

  return {
    async handle(request, peer) {
      let parsedBody: unknown;
      if (request.method === 'POST') {
        try {
          parsedBody = JSON.parse(await request.text());
        } catch {
          return rpcError(400, -32700, 'Parse error: the request body is not valid JSON');
        }
      }
      // A 2026-07-28 client names its revision on every request, a 2025-11-25 one never names a later one.
      if (isModernProtocol(request.headers.get('mcp-protocol-version')))
        return modern.fetch(request, { parsedBody });
      return (await isLegacyRequest(request, parsedBody))
        ? legacy(request, parsedBody, peer)
        : modern.fetch(request, { parsedBody });
    },
    listingChanged() {
      // 2026-07-28 clients listen through subscriptions/listen; 2025-11-25 sessions are told directly.
      modern.notify.resourcesChanged();
      modern.notify.promptsChanged();
      for (const { server } of store.sessions()) announceListChanged(server);
    },
    expireSessions: () => store.expire(),
    openSessions: () => [...store.sessions()].length,
    async close() {
      await store.closeAll();
      await modern.close();
    },
  };
}
