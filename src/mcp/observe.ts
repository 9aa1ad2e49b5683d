import {
  isJSONRPCErrorResponse,
  isJSONRPCNotification,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
  type Transport,
} from '@modelcontextprotocol/server';
import type { ServerFactory } from './server.ts';

/** How a request ended: `ok`, or the JSON-RPC error by name. A bounded set, fit for a metric label. */
export type RequestOutcome =
  | 'ok'
  | 'parse_error'
  | 'invalid_request'
  | 'method_not_found'
  | 'invalid_params'
  | 'internal_error'
  | 'error';

export type RequestObserver = (method: string, outcome: RequestOutcome, seconds: number) => void;

const ERRORS: Record<number, RequestOutcome> = {
  [-32700]: 'parse_error',
  [-32600]: 'invalid_request',
  [-32601]: 'method_not_found',
  [-32602]: 'invalid_params',
  [-32603]: 'internal_error',
};

const outcomeOf = (message: JSONRPCMessage): RequestOutcome =>
  isJSONRPCErrorResponse(message) ? (ERRORS[message.error.code] ?? 'error') : 'ok';

/**
 * Sees every request a server's transport delivers and the response it sends back. The server chains the
 * transport's own `onmessage` (set before it connects) ahead of its dispatch, and sends through `send`.
 */
function watched(transport: Transport, observe: RequestObserver): Transport {
  const open = new Map<string | number, { method: string; started: number }>();
  const onmessage = transport.onmessage;
  transport.onmessage = (message, extra) => {
    if (isJSONRPCRequest(message))
      open.set(message.id, { method: message.method, started: performance.now() });
    // A cancelled request is never answered.
    else if (isJSONRPCNotification(message) && message.method === 'notifications/cancelled')
      open.delete((message.params as { requestId?: string | number } | undefined)?.requestId ?? '');
    onmessage?.(message, extra);
  };
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    if (isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message)) {
      const request = message.id === undefined ? undefined : open.get(message.id);
      if (request !== undefined) {
        open.delete(message.id!);
        observe(request.method, outcomeOf(message), (performance.now() - request.started) / 1000);
      }
    }
    return send(message, options);
  };
  return transport;
}

/** The same factory, whose servers report each request they answer: its method, outcome and duration. */
export function observeRequests(factory: ServerFactory, observe: RequestObserver): ServerFactory {
  const observed: ServerFactory = (context) => {
    const mcp = factory(context);
    const server = mcp.server;
    const connect = server.connect.bind(server);
    server.connect = (transport) => connect(watched(transport, observe));
    return mcp;
  };
  const { answerDirect } = factory;
  if (answerDirect !== undefined)
    observed.answerDirect = async (request, body, authInfo) => {
      const started = performance.now();
      const answer = await answerDirect(request, body, authInfo);
      if (answer !== undefined) observe(answer.method, 'ok', (performance.now() - started) / 1000);
      return answer;
    };
  return observed;
}
