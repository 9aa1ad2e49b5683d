import { request as forward, createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the proxy does to the requests it gets, switchable at any time. */
export type Fault =
  | { kind: 'pass' }
  | { kind: 'status'; status: number }
  | { kind: 'hang' }
  | { kind: 'empty-pack' }
  | { kind: 'truncate-pack'; bytes: number };

/** A loopback HTTP proxy in front of a git server that fails on cue: status codes, silence, empty or cut packs. */
export async function startFaultProxy(
  target: string,
): Promise<{ url: string; setFault(fault: Fault): void; close(): Promise<void> }> {
  let fault: Fault = { kind: 'pass' };
  const hanging = new Set<ServerResponse>();
  const isPack = (req: IncomingMessage) =>
    req.method === 'POST' && (req.url ?? '').endsWith('/git-upload-pack');
  const server = createServer((req, res) => {
    if (fault.kind === 'status') {
      res.writeHead(fault.status, { 'content-type': 'text/plain' }).end('injected fault\n');
      return;
    }
    if (fault.kind === 'hang') {
      hanging.add(res);
      return;
    }
    if (fault.kind === 'empty-pack' && isPack(req)) {
      req.resume();
      res.writeHead(200, { 'content-type': 'application/x-git-upload-pack-result' }).end();
      return;
    }
    const cut = fault.kind === 'truncate-pack' && isPack(req) ? fault.bytes : undefined;
    const upstream = forward(
      `${target}${req.url ?? ''}`,
      { method: req.method, headers: req.headers },
      (answer) => {
        const headers = { ...answer.headers };
        if (cut !== undefined) delete headers['content-length'];
        res.writeHead(answer.statusCode ?? 502, headers);
        if (cut === undefined) {
          answer.pipe(res);
          return;
        }
        let sent = 0;
        answer.on('data', (chunk: Buffer) => {
          if (sent >= cut) return;
          res.write(chunk.subarray(0, cut - sent));
          sent += chunk.length;
          if (sent >= cut) res.end();
        });
        answer.on('end', () => res.end());
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    setFault(next) {
      fault = next;
      for (const res of hanging) res.destroy();
      hanging.clear();
    },
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
