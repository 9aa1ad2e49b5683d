import type { IncomingMessage, ServerResponse } from 'node:http';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { rawWebRequest, readRawBody, writeResponse } from './body.ts';

/** Routes one web request to its answer. */
export type Route = (request: Request) => Promise<Response>;

/** Where the web request carries the client's address: set by the listener, over anything the client sent. */
export const PEER_HEADER = 'x-skillpin-peer-address';

/** The client's address of a request that came through the listener. */
export const peerOf = (request: Request): string => request.headers.get(PEER_HEADER) ?? '';

export interface ListenerOptions {
  route: Route;
  /** The methods each path serves, for a 405's `Allow`. */
  methodsOf: (pathname: string) => readonly string[] | undefined;
  methodNotAllowed: (method: string, allowed: readonly string[]) => Response;
  /** The webhook path and its own body limit, when webhooks are on; `onTooLarge` is told of each 413. */
  webhook?: { path: string; maxBodyBytes: number; onTooLarge?: () => void };
  onerror: (error: Error) => void;
}

// Methods a web Request cannot carry (Fetch standard): answered before the request is converted to one.
const FORBIDDEN_METHODS = new Set(['CONNECT', 'TRACE', 'TRACK']);

const asError = (error: unknown) => (error instanceof Error ? error : new Error(String(error)));

/**
 * The Node request listener in front of the web-standard routes: it knows the client's address, refuses methods
 * no web Request can carry, and hands the webhook its raw bytes (the SDK's adapter decodes a body as text and
 * caps it at 4 MiB, which would break signatures and override `webhook.maxBodyBytes`).
 */
export function requestListener(
  options: ListenerOptions,
): (req: IncomingMessage, res: ServerResponse) => void {
  // One adapter for every request: an adapter made per request keeps each exchange's objects alive longer.
  const adapter = toNodeHandler({ fetch: (request) => options.route(request) }, { onerror: options.onerror });
  return (req, res) => {
    req.headers[PEER_HEADER] = req.socket.remoteAddress ?? '';
    const method = req.method ?? 'GET';
    const pathname = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (FORBIDDEN_METHODS.has(method)) {
      void writeResponse(res, options.methodNotAllowed(method, options.methodsOf(pathname) ?? ['GET']));
      return;
    }
    const { webhook } = options;
    if (webhook !== undefined && pathname === webhook.path && method === 'POST') {
      const answer = async () => {
        const body = await readRawBody(req, webhook.maxBodyBytes);
        if (body === undefined) webhook.onTooLarge?.();
        return body === undefined
          ? Response.json(
              { error: `body larger than ${webhook.maxBodyBytes} bytes` },
              { status: 413, headers: { connection: 'close' } },
            )
          : options.route(rawWebRequest(req, body));
      };
      void answer()
        .catch((error: unknown) => {
          options.onerror(asError(error));
          return Response.json({ error: 'internal error' }, { status: 500 });
        })
        .then((response) => writeResponse(res, response));
      return;
    }
    void adapter(req, res);
  };
}
