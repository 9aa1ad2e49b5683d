import { Agent, createServer, type IncomingMessage, request } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Routed {
  method: string;
  path: string;
  /** Index of the upstream that served it. */
  upstream: number;
  status: number;
}

export interface RoundRobinProxy {
  /** The proxy's base URL, e.g. `http://127.0.0.1:41234`. */
  url: string;
  /** Every request, in the order it was forwarded. */
  routed: Routed[];
  /** Takes an upstream out of rotation (a replica removed by a rollout or a scale-down). */
  drop(upstream: number): void;
  close(): Promise<void>;
}

export interface ProxyOptions {
  /**
   * Sticky 2025-11-25 sessions: a request naming an `Mcp-Session-Id` goes to the upstream that issued it, while
   * that upstream is in rotation (as a load balancer hashing on the header would).
   */
  sessionAffinity?: boolean;
  /** Headers set on every forwarded request (an authenticating gateway in front of the servers). */
  setHeaders?: Record<string, string>;
  /** The loopback port to listen on (default: a free one). */
  port?: number;
}

/**
 * A small load balancer on loopback: each request goes to the next upstream in turn, body and headers as sent
 * (Host included), the answer streamed back as it comes (SSE too).
 */
export async function startRoundRobinProxy(
  upstreams: readonly string[],
  options: ProxyOptions = {},
): Promise<RoundRobinProxy> {
  const targets = upstreams.map((url) => new URL(url));
  const live = targets.map(() => true);
  const sessions = new Map<string, number>();
  const routed: Routed[] = [];
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  let next = 0;
  const pick = (req: IncomingMessage): number => {
    const session = req.headers['mcp-session-id'];
    const sticky = typeof session === 'string' ? sessions.get(session) : undefined;
    if (options.sessionAffinity === true && sticky !== undefined && live[sticky]) return sticky;
    for (;;) {
      const chosen = next++ % targets.length;
      if (live[chosen]) return chosen;
    }
  };
  const server = createServer((req, res) => {
    const upstream = pick(req);
    const target = targets[upstream]!;
    const chunks: Buffer[] = [];
    req.on('error', () => res.destroy());
    res.on('error', () => undefined);
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const send = (retry: boolean) => {
        const forward = request(
          {
            host: target.hostname,
            port: target.port,
            method: req.method,
            path: req.url,
            headers: { ...req.headers, ...options.setHeaders },
            agent,
          },
          (answer) => {
            const issued = answer.headers['mcp-session-id'];
            if (typeof issued === 'string') sessions.set(issued, upstream);
            routed.push({
              method: req.method ?? '',
              path: req.url ?? '',
              upstream,
              status: answer.statusCode ?? 0,
            });
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            answer.pipe(res);
          },
        );
        let failed = false;
        forward.on('error', (error: NodeJS.ErrnoException) => {
          if (failed) return;
          failed = true;
          // A kept-alive connection the upstream closed as it was reused: the request never reached it.
          if (retry && forward.reusedSocket && error.code === 'ECONNRESET' && !res.headersSent)
            return send(false);
          if (!res.headersSent) res.writeHead(502);
          res.end();
        });
        res.once('close', () => {
          if (!res.writableFinished) forward.destroy();
        });
        forward.end(body);
      };
      send(true);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', resolve);
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    routed,
    drop(index) {
      live[index] = false;
    },
    close: () =>
      new Promise<void>((resolve) => {
        agent.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
