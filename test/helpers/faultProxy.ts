import { request as forward, createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { endlessPack } from './hostilePacks.ts';

/** What the proxy does to the requests it gets, switchable at any time. */
export type Fault =
  | { kind: 'pass' }
  | { kind: 'status'; status: number }
  | { kind: 'hang' }
  | { kind: 'empty-pack' }
  | { kind: 'truncate-pack'; bytes: number }
  /** The real answer's lines up to where its pack starts (side band 1), and there the answer ends. */
  | { kind: 'cut-before-pack' }
  /**
   * The real answer up to where its pack starts, then a pack of valid objects that never ends (`first` the first of
   * them, when given).
   */
  | { kind: 'endless-pack'; first?: Buffer }
  /**
   * The real answer, one byte every `everyMs` after its first `after` bytes, or after the first `afterPack` bytes
   * of its pack (side band 1) and all before them, as whole lines; only upload-pack answers with `packOnly`.
   */
  | { kind: 'drip'; everyMs: number; after?: number; afterPack?: number; packOnly?: boolean }
  /**
   * Requests whose path starts with `from` (default: all) are redirected to `to` + the rest of the path (only the
   * ones carrying credentials, with `when: 'authenticated'`); the others pass.
   */
  | { kind: 'redirect'; to: string; from?: string; status?: number; when?: 'always' | 'authenticated' }
  /** 401 until a request carries credentials, then a git error line that repeats its Authorization header. */
  | { kind: 'echo-credentials' };

/** One request the proxy got, with the credentials it carried. */
export interface SeenRequest {
  method: string;
  url: string;
  authorization?: string;
}

export interface FaultProxy {
  url: string;
  /** Every request received, in order. */
  seen: SeenRequest[];
  setFault(fault: Fault): void;
  close(): Promise<void>;
}

const pkt = (payload: Buffer | string) => {
  const body = Buffer.isBuffer(payload) ? payload : Buffer.from(payload);
  return Buffer.concat([Buffer.from((body.length + 4).toString(16).padStart(4, '0')), body]);
};

/** Splits a pkt-line stream into lines as they complete; calls `onLine` with each raw line (header included). */
function pktLines(onLine: (line: Buffer, payload: Buffer) => boolean | undefined) {
  let pending = Buffer.alloc(0);
  let done = false;
  return (chunk: Buffer) => {
    if (done) return;
    pending = Buffer.concat([pending, chunk]);
    while (pending.length >= 4) {
      const size = Number.parseInt(pending.toString('latin1', 0, 4), 16);
      const length = Math.max(size, 4);
      if (pending.length < length) return;
      const line = pending.subarray(0, length);
      pending = pending.subarray(length);
      if (onLine(line, line.subarray(4)) === false) {
        done = true;
        return;
      }
    }
  };
}

/**
 * A whole upload-pack answer cut after the first `bytes` bytes of its pack (side band 1): the side-band line
 * holding that point is split in two, so that what comes before the cut is whole lines a client can act on (a
 * pack usually travels in one line of up to 64 KiB). `at` is where the cut is; the answer's end if the pack is
 * shorter.
 */
function cutPack(answer: Buffer, bytes: number): { body: Buffer; at: number } {
  let left = bytes;
  for (let at = 0; at + 4 <= answer.length; ) {
    const length = Math.max(Number.parseInt(answer.toString('latin1', at, at + 4), 16) || 0, 4);
    if (length > 5 && answer[at + 4] === 1) {
      if (length - 5 > left) {
        const payload = answer.subarray(at + 5, at + length);
        const head = pkt(Buffer.concat([Buffer.of(1), payload.subarray(0, left)]));
        const tail = pkt(Buffer.concat([Buffer.of(1), payload.subarray(left)]));
        return {
          body: Buffer.concat([answer.subarray(0, at), head, tail, answer.subarray(at + length)]),
          at: at + head.length,
        };
      }
      left -= length - 5;
    }
    at += length;
  }
  return { body: answer, at: answer.length };
}

/**
 * A loopback HTTP(S) proxy in front of a git server that fails on cue: status codes, silence, empty, cut or endless
 * packs, drips, redirects, and a remote that echoes credentials. `tls` makes it an https server.
 */
export async function startFaultProxy(
  target: string,
  options: { tls?: { key: string; cert: string } } = {},
): Promise<FaultProxy> {
  let fault: Fault = { kind: 'pass' };
  const seen: SeenRequest[] = [];
  const open = new Set<ServerResponse>();
  /** Answers that never finish on their own (hanging, dripping, endless): a new fault ends them. */
  const stalled = new Set<ServerResponse>();
  const timers = new Set<NodeJS.Timeout>();
  const isPack = (req: IncomingMessage) =>
    req.method === 'POST' && (req.url ?? '').endsWith('/git-upload-pack');

  const handler = (req: IncomingMessage, res: ServerResponse) => {
    const url = req.url ?? '';
    seen.push({
      method: req.method ?? 'GET',
      url,
      ...(req.headers.authorization === undefined ? {} : { authorization: req.headers.authorization }),
    });
    open.add(res);
    res.on('close', () => {
      open.delete(res);
      stalled.delete(res);
    });
    const now = fault;
    if (now.kind === 'status') {
      res.writeHead(now.status, { 'content-type': 'text/plain' }).end('injected fault\n');
      return;
    }
    if (now.kind === 'hang') {
      stalled.add(res);
      return;
    }
    if (now.kind === 'empty-pack' && isPack(req)) {
      req.resume();
      res.writeHead(200, { 'content-type': 'application/x-git-upload-pack-result' }).end();
      return;
    }
    if (now.kind === 'redirect' && url.startsWith(now.from ?? '/')) {
      if (now.when !== 'authenticated' || req.headers.authorization !== undefined) {
        req.resume();
        res
          .writeHead(now.status ?? 302, { location: `${now.to}${url.slice((now.from ?? '/').length - 1)}` })
          .end();
        return;
      }
    }
    if (now.kind === 'echo-credentials') {
      req.resume();
      if (req.headers.authorization === undefined) {
        res
          .writeHead(401, { 'www-authenticate': 'Basic realm="git"', 'content-type': 'text/plain' })
          .end('who?\n');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/x-git-upload-pack-advertisement' });
      res.end(pkt(`ERR Authorization: ${req.headers.authorization}\n`));
      return;
    }
    const cut = now.kind === 'truncate-pack' && isPack(req) ? now.bytes : undefined;
    const endless = now.kind === 'endless-pack' && isPack(req) ? now : undefined;
    const beforePack = now.kind === 'cut-before-pack' && isPack(req);
    const drip = now.kind === 'drip' && (!now.packOnly || isPack(req)) ? now : undefined;
    if (endless !== undefined || drip !== undefined) stalled.add(res);
    const upstream = forward(`${target}${url}`, { method: req.method, headers: req.headers }, (answer) => {
      const headers = { ...answer.headers };
      if (cut !== undefined || endless !== undefined || drip !== undefined || beforePack)
        delete headers['content-length'];
      res.writeHead(answer.statusCode ?? 502, headers);
      if (beforePack || endless !== undefined) {
        // The answer's lines pass until its pack begins (side band 1); there the answer ends, or a pack that never
        // ends takes its place.
        answer.on(
          'data',
          pktLines((line, payload) => {
            if (payload[0] !== 1) {
              res.write(line);
              return undefined;
            }
            answer.destroy();
            if (endless === undefined) res.end();
            else void pump(res, endlessPack(endless.first));
            return false;
          }),
        );
        return;
      }
      if (drip !== undefined) {
        const chunks: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => chunks.push(chunk));
        answer.on('end', () => {
          const answer = Buffer.concat(chunks);
          const { body, at: first } =
            drip.afterPack === undefined
              ? { body: answer, at: Math.min(drip.after ?? 0, answer.length) }
              : cutPack(answer, drip.afterPack);
          res.write(body.subarray(0, first));
          let at = first;
          const timer = setInterval(() => {
            if (at >= body.length || res.destroyed) {
              clearInterval(timer);
              timers.delete(timer);
              res.end();
              return;
            }
            res.write(body.subarray(at, ++at));
          }, drip.everyMs);
          timers.add(timer);
        });
        return;
      }
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
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  };

  const server = options.tls === undefined ? createServer(handler) : createTlsServer(options.tls, handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const stopStalled = () => {
    for (const timer of timers) clearInterval(timer);
    timers.clear();
    for (const res of stalled) res.destroy();
    stalled.clear();
  };
  return {
    url: `${options.tls === undefined ? 'http' : 'https'}://127.0.0.1:${port}`,
    seen,
    setFault(next) {
      fault = next;
      stopStalled();
    },
    async close() {
      stopStalled();
      for (const res of open) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Writes side-band-64k frames of `pack` to `res` as fast as it takes them, until it closes. */
async function pump(res: ServerResponse, pack: Iterator<Buffer>): Promise<void> {
  while (!res.destroyed && !res.writableEnded) {
    const chunk = pack.next().value as Buffer;
    for (let at = 0; at < chunk.length; at += 65_515) {
      const frame = pkt(Buffer.concat([Buffer.from([1]), chunk.subarray(at, at + 65_515)]));
      if (!res.write(frame))
        await new Promise<void>((resolve) => {
          const done = () => {
            res.off('drain', done);
            res.off('close', done);
            resolve();
          };
          res.on('drain', done);
          res.on('close', done);
        });
      if (res.destroyed) return;
    }
  }
}
