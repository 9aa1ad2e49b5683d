import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import type { BodyBudget } from './bodyBudget.ts';

/** Why a body was not read: over its limit, no room among the bodies in flight, too slow, or the client left. */
export type BodyRefusal = 'too-large' | 'busy' | 'slow' | 'gone';

export type BodyRead = { ok: true; body: Buffer; release(): void } | { ok: false; why: BodyRefusal };

export interface BodyReadOptions {
  maxBytes: number;
  budget: BodyBudget;
  deadlineMs: number;
}

/**
 * The body's raw bytes, at most `maxBytes`, read within `deadlineMs`. The bytes are taken from `budget` as they are
 * promised (Content-Length) or arrive, whichever is more; `release` gives them back once the request is served.
 */
export function readBody(req: IncomingMessage, options: BodyReadOptions): Promise<BodyRead> {
  const { maxBytes, budget } = options;
  const declared = Number(req.headers['content-length'] ?? '0');
  if (declared > maxBytes) return Promise.resolve({ ok: false, why: 'too-large' });
  let reserved = 0;
  const reserve = (bytes: number) => {
    if (bytes <= reserved) return true;
    if (!budget.take(bytes - reserved)) return false;
    reserved = bytes;
    return true;
  };
  if (!reserve(declared)) return Promise.resolve({ ok: false, why: 'busy' });
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (read: BodyRead) => {
      clearTimeout(timer);
      req.off('data', onData).off('end', onEnd).off('close', onClose);
      if (!read.ok) budget.give(reserved);
      resolve(read);
    };
    const timer = setTimeout(() => finish({ ok: false, why: 'slow' }), options.deadlineMs);
    const onData = (chunk: Buffer) => {
      size += chunk.byteLength;
      if (size > maxBytes) finish({ ok: false, why: 'too-large' });
      else if (!reserve(size)) finish({ ok: false, why: 'busy' });
      else chunks.push(chunk);
    };
    const onEnd = () => {
      let held = reserved;
      const release = () => {
        budget.give(held);
        held = 0;
      };
      finish({ ok: true, body: Buffer.concat(chunks, size), release });
    };
    const onClose = () => finish({ ok: false, why: 'gone' });
    req.on('data', onData).once('end', onEnd).once('close', onClose);
  });
}

/**
 * After an answer given without reading the whole body: the rest is read and dropped, so a client still sending
 * reads its answer (closing on unread bytes would reset the connection under it), and the connection is closed if
 * the body has not ended within `deadlineMs`.
 */
export function discardRest(req: IncomingMessage, deadlineMs: number): void {
  if (req.readableEnded) return;
  const timer = setTimeout(() => req.socket.destroy(), deadlineMs);
  const stop = () => clearTimeout(timer);
  req.once('end', stop).once('close', stop).resume();
}

/** The request's head as a web Request (no body yet); throws when its Host and path make no URL. */
export function webRequestHead(req: IncomingMessage, signal: AbortSignal): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || name.startsWith(':')) continue;
    for (const item of Array.isArray(value) ? value : [value]) headers.append(name, item);
  }
  return new Request(`http://${req.headers.host ?? 'localhost'}${req.url ?? '/'}`, {
    method: req.method ?? 'GET',
    headers,
    signal,
  });
}

/** `head` carrying exactly `body` (a webhook's signature is over its raw bytes). */
export const withBody = (head: Request, body: Uint8Array): Request =>
  body.byteLength === 0 ? head : new Request(head, { body });

/**
 * A body's chunks as they come, not joined: `Response.arrayBuffer()` joins them into a copy of its own (about 0.03 ms
 * of CPU for a 100 KiB listing page).
 */
async function chunksOf(body: ReadableStream<Uint8Array>): Promise<Uint8Array[]> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  for (let read = await reader.read(); !read.done; read = await reader.read()) chunks.push(read.value);
  return chunks;
}

/**
 * Writes a web Response to a Node response. An event stream (SSE) goes as it comes, at the pace the client reads;
 * any other answer (JSON, a page, metrics) is whole in memory already, so it goes at once with its length: a
 * stream pipeline per answer cost an abort signal, an abort error and a stream of its own.
 */
export async function writeResponse(res: ServerResponse, response: Response): Promise<void> {
  const headers = Object.fromEntries(response.headers);
  if (response.body === null) {
    res.writeHead(response.status, headers).end();
    return;
  }
  if (!response.headers.get('content-type')?.startsWith('text/event-stream')) {
    const chunks = await chunksOf(response.body);
    const length = chunks.reduce((sum, chunk) => sum + chunk.byteLength, 0);
    res.writeHead(response.status, { 'content-length': String(length), ...headers });
    for (const chunk of chunks.slice(0, -1)) res.write(chunk);
    res.end(chunks.at(-1));
    return;
  }
  res.writeHead(response.status, headers);
  // A client that leaves ends the stream (its producer is cancelled); that is no error here.
  await pipeline(Readable.fromWeb(response.body as NodeReadableStream), res).catch(() => undefined);
}
