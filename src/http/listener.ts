import type { IncomingMessage, ServerResponse } from 'node:http';
import { discardRest, readBody, type BodyRefusal, webRequestHead, writeResponse } from './body.ts';
import { BODY_RETRY_AFTER_S, type BodyLimits, createBodyBudget } from './bodyBudget.ts';

/**
 * How a request may go on once its head was checked: read its body (at most `maxBodyBytes`), then serve it. The
 * body comes as its raw bytes beside the head's Request (empty for GET and HEAD): a second Request carrying them
 * would cost another copy, signal and header list per request.
 */
export interface Admitted {
  maxBodyBytes: number;
  serve(request: Request, body: Uint8Array): Promise<Response>;
  /** Told when the body passed `maxBodyBytes` (413). */
  onTooLarge?: () => void;
}

/** Decides from a request's head alone (Host, Origin, method, path, credentials): an answer now, or go on. */
export type Gate = (head: Request) => Promise<Response | Admitted>;

/** Where the web request carries the client's address: set by the listener, over anything the client sent. */
export const PEER_HEADER = 'x-skillpin-peer-address';

/** The client's address of a request that came through the listener. */
export const peerOf = (request: Request): string => request.headers.get(PEER_HEADER) ?? '';

export interface ListenerOptions {
  gate: Gate;
  /** The methods each path serves, for a 405's `Allow`. */
  methodsOf: (pathname: string) => readonly string[] | undefined;
  methodNotAllowed: (method: string, allowed: readonly string[]) => Response;
  limits: BodyLimits;
  /** Told of every answer (the debug log). */
  onAnswer: (method: string, pathname: string, status: number, ms: number) => void;
  onerror: (error: Error) => void;
}

// Methods a web Request cannot carry (Fetch standard): answered before the request is converted to one.
const FORBIDDEN_METHODS = new Set(['CONNECT', 'TRACE', 'TRACK']);
// RFC 9110 §7.2: uri-host [":" port], an IP literal or a name; anything else (userinfo, a path) is refused.
const HOST = /^(?:\[[0-9a-f:.]+\]|[a-z0-9._-]+)(?::\d{1,5})?$/i;

const json = (status: number, error: string, headers: Record<string, string> = {}) =>
  Response.json({ error }, { status, headers });

const BODY_REFUSED: Record<
  Exclude<BodyRefusal, 'gone'>,
  (admitted: Admitted, limits: BodyLimits) => Response
> = {
  'too-large': ({ maxBodyBytes }) => json(413, `body larger than ${maxBodyBytes} bytes`),
  busy: ({ maxBodyBytes }, { inFlightBytes }) =>
    json(
      503,
      `the server holds ${inFlightBytes} bytes of request bodies at most, and has no room for ${maxBodyBytes} more now; retry later`,
      { 'retry-after': String(BODY_RETRY_AFTER_S) },
    ),
  slow: (_, { deadlineMs }) =>
    json(408, `the body did not arrive within ${deadlineMs} ms`, { connection: 'close' }),
};

/** The path of a request target; '' when it has none a URL can hold. */
function pathnameOf(target: string): string {
  try {
    return new URL(target, 'http://localhost').pathname;
  } catch {
    return '';
  }
}

const NO_BODY = new Uint8Array(0);

const asError = (error: unknown) => (error instanceof Error ? error : new Error(String(error)));

/**
 * The Node request listener in front of the web-standard routes. Whether a request may send a body is decided from
 * its head before a byte of the body is read; bodies are then read whole as raw bytes (webhook signatures are over
 * them), each within its limit and the deadline, and all together within one budget.
 */
export function requestListener(
  options: ListenerOptions,
): (req: IncomingMessage, res: ServerResponse) => void {
  const { limits } = options;
  const budget = createBodyBudget(limits.inFlightBytes);

  /** Answers without reading the (rest of the) body. */
  const answer = async (req: IncomingMessage, res: ServerResponse, response: Response) => {
    if (response.headers.get('connection') !== 'close') discardRest(req, limits.deadlineMs);
    await writeResponse(res, response);
    return response.status;
  };

  const exchange = async (req: IncomingMessage, res: ServerResponse, pathname: string) => {
    const method = req.method ?? 'GET';
    if (FORBIDDEN_METHODS.has(method))
      return answer(req, res, options.methodNotAllowed(method, options.methodsOf(pathname) ?? ['GET']));
    if (!HOST.test(req.headers.host ?? ''))
      return answer(req, res, json(400, 'the Host header is not a host name with an optional port'));
    // The exchange's signal: aborted when the client leaves before its answer was written.
    const abort = new AbortController();
    res.once('close', () => {
      if (!res.writableFinished) abort.abort();
    });
    let head: Request;
    try {
      head = webRequestHead(req, abort.signal);
    } catch {
      return answer(req, res, json(400, 'the request target and Host make no URL'));
    }
    const admitted = await options.gate(head);
    if (admitted instanceof Response) return answer(req, res, admitted);
    if (method === 'GET' || method === 'HEAD') return answer(req, res, await admitted.serve(head, NO_BODY));
    // A client that waits for `100 Continue` (listened for as checkContinue) sends its body only now.
    if (/100-continue/i.test(req.headers.expect ?? '')) res.writeContinue();
    const read = await readBody(req, {
      maxBytes: admitted.maxBodyBytes,
      budget,
      deadlineMs: limits.deadlineMs,
    });
    if (!read.ok) {
      if (read.why === 'gone') return 0;
      if (read.why === 'too-large') admitted.onTooLarge?.();
      return answer(req, res, BODY_REFUSED[read.why](admitted, limits));
    }
    let response: Response;
    try {
      response = await admitted.serve(head, read.body);
    } finally {
      // Served: the body was parsed, a stream that goes on (SSE) holds no more of it.
      read.release();
    }
    await writeResponse(res, response);
    return response.status;
  };

  return (req, res) => {
    const started = performance.now();
    req.headers[PEER_HEADER] = req.socket.remoteAddress ?? '';
    // A client that leaves mid-body errors its request; that is handled where the body is read.
    req.on('error', () => undefined);
    const pathname = pathnameOf(req.url ?? '/');
    void exchange(req, res, pathname)
      .catch(async (error: unknown) => {
        options.onerror(asError(error));
        if (res.headersSent) return res.destroy();
        return answer(req, res, json(500, 'internal error'));
      })
      .then((status) => {
        if (typeof status === 'number')
          options.onAnswer(req.method ?? 'GET', pathname, status, performance.now() - started);
      });
  };
}
