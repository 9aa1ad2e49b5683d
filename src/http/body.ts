import type { IncomingMessage, ServerResponse } from 'node:http';

/** Bytes of an oversized body read and dropped before answering 413: a client still sending sees the answer. */
const DRAIN_BYTES = 16 * 1024 * 1024;

/** The body's raw bytes, at most `max`; `undefined` when it is larger (read and dropped first, see DRAIN_BYTES). */
export async function readRawBody(req: IncomingMessage, max: number): Promise<Buffer | undefined> {
  const declared = Number(req.headers['content-length'] ?? '0');
  if (declared > max + DRAIN_BYTES) return undefined;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.byteLength;
    // Past the limit the rest is read and dropped (up to DRAIN_BYTES), so the client gets to read its 413.
    if (size > max + DRAIN_BYTES) return undefined;
    if (size <= max) chunks.push(chunk);
  }
  return size > max ? undefined : Buffer.concat(chunks);
}

/** A web Request for `req` carrying exactly `body` (the SDK's adapter decodes bodies as text, which loses bytes). */
export function rawWebRequest(req: IncomingMessage, body: Uint8Array): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || name.startsWith(':')) continue;
    for (const item of Array.isArray(value) ? value : [value]) headers.append(name, item);
  }
  return new Request(`http://${req.headers.host ?? 'localhost'}${req.url ?? '/'}`, {
    method: req.method ?? 'GET',
    headers,
    ...(body.byteLength > 0 ? { body } : {}),
  });
}

/** Writes a web Response, read whole, to a Node response. */
export async function writeResponse(res: ServerResponse, response: Response): Promise<void> {
  const body = Buffer.from(await response.arrayBuffer());
  res.writeHead(response.status, Object.fromEntries(response.headers));
  res.end(body);
}
