import { readFileSync } from 'node:fs';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { rootCertificates } from 'node:tls';
import { HttpProxyAgent } from 'http-proxy-agent';
import { HttpsProxyAgent } from 'https-proxy-agent';
import type { GitHttpRequest, GitHttpResponse, HttpClient } from 'isomorphic-git';
import { getProxyForUrl } from 'proxy-from-env';
import { DEFAULT_HTTP_TIMEOUT_MS, MAX_REDIRECTS, MAX_REF_LISTING_BYTES } from '../limits.ts';
import { type TransferGuard, transferGuard } from '../packGuard.ts';
import type { PackWriter } from './packWriter.ts';
import { stopOf, TransportStop } from './stop.ts';

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

export interface HttpClientOptions {
  /** The configured remote's origin (scheme, host, port): the only one credentials are ever sent to. */
  origin?: string;
  /** No bytes for this long, in either direction, fails a request (`source-timeout`). */
  timeoutMs?: number;
  /** The client's requests still running this long after it was made are stopped (`source-timeout`). */
  deadlineMs?: number;
  /** Bytes all responses together may bring (`source-too-large`). */
  maxBytes?: number;
  /** Objects a pack may declare (`source-too-large`). */
  maxObjects?: number;
  redirects?: 'follow' | 'refuse';
  proxy?: string;
  seen?: HttpObservations;
  /**
   * A writer for each upload-pack answer's pack, following it with the transfer's guard: the pack goes to it (to
   * disk) instead of to isomorphic-git, which would hold it whole in memory; isomorphic-git gets the other lines.
   */
  pack?: (guard: TransferGuard) => PackWriter;
}

/** What the client saw, for telling apart answers isomorphic-git treats alike. */
export interface HttpObservations {
  /**
   * What the last upload-pack answer held: a pack (some of it, at least), no pack and a line saying why (`ERR`, side
   * band 3), or neither (an empty answer, or one cut before its pack).
   */
  packAnswer?: 'pack' | 'refused' | 'nothing';
}

/** CA certificates git (curl) would trust beside the system's: GIT_SSL_CAINFO, else SSL_CERT_FILE. */
function extraCertificates(): string[] | undefined {
  const file = process.env['GIT_SSL_CAINFO'] || process.env['SSL_CERT_FILE'];
  if (file === undefined) return undefined;
  try {
    return [...rootCertificates, readFileSync(file, 'utf8')];
  } catch {
    return undefined;
  }
}

const CREDENTIAL_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie']);

/** Headers for a request to another origin than the configured one: none that carry credentials. */
function withoutCredentials(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers).filter(([name]) => !CREDENTIAL_HEADERS.has(name.toLowerCase())),
  );
}

async function collect(body: GitHttpRequest['body']): Promise<Buffer | undefined> {
  if (body === undefined) return undefined;
  const chunks: Uint8Array[] = [];
  for await (const chunk of body as AsyncIterable<Uint8Array>) chunks.push(chunk);
  return Buffer.concat(chunks);
}

interface SendOptions {
  timeoutMs: number;
  proxy: string | undefined;
  /** Time left before the deadline, when there is one. */
  remainingMs: number | undefined;
  /** The deadline passed: the guard's refusal, as a stop. */
  overtime: () => TransportStop;
  /** Records why the client stopped a request (the error isomorphic-git sees may be its own). */
  stop: (why: TransportStop) => TransportStop;
  /** Every request made, so that closing the client ends those isomorphic-git left unread. */
  open: Set<{ destroy(): void }>;
}

function send(
  url: string,
  method: string,
  headers: Record<string, string>,
  body: Buffer | undefined,
  options: SendOptions,
): Promise<IncomingMessage> {
  // git.proxy, else HTTPS_PROXY / HTTP_PROXY / ALL_PROXY unless NO_PROXY names the host, as git (curl) does.
  const via = options.proxy ?? (getProxyForUrl(url) || undefined);
  const https = url.startsWith('https:');
  const agent = via === undefined ? undefined : https ? new HttpsProxyAgent(via) : new HttpProxyAgent(via);
  const ca = https ? extraCertificates() : undefined;
  return new Promise((resolve, reject) => {
    const request = (https ? httpsRequest : httpRequest)(url, {
      agent,
      ca,
      method,
      headers: body === undefined ? headers : { ...headers, 'content-length': String(body.byteLength) },
    });
    let response: IncomingMessage | undefined;
    const end = (why: TransportStop) => {
      options.stop(why);
      response?.destroy(why);
      request.destroy(why);
    };
    // An idle-socket timeout, so a slow but moving transfer is fine and a stalled one is not.
    request.setTimeout(options.timeoutMs, () =>
      end(new TransportStop('source-timeout', { timeoutMs: options.timeoutMs }, 'idle')),
    );
    // The deadline holds however the bytes move: a drip ends with it, the body's reader gets the error.
    const deadline =
      options.remainingMs === undefined
        ? undefined
        : setTimeout(() => end(options.overtime()), options.remainingMs);
    // The deadline watches a request; it never keeps the process running by itself.
    deadline?.unref();
    const handle = {
      destroy() {
        response?.destroy();
        request.destroy();
      },
    };
    options.open.add(handle);
    // Done once the answer is read to its end (or the request failed): an unread answer holds its socket.
    const done = () => {
      options.open.delete(handle);
      clearTimeout(deadline);
    };
    request.once('close', () => {
      if (response === undefined || response.closed) done();
      else response.once('close', done);
    });
    request.once('error', reject);
    request.once('response', (answer) => {
      response = answer;
      resolve(answer);
    });
    request.end(body);
  });
}

/** Passes a response body on, counting its bytes against the client's limit. */
async function* watched(
  body: AsyncIterable<Uint8Array>,
  count: (chunk: Uint8Array) => void,
): AsyncIterableIterator<Uint8Array> {
  for await (const chunk of body) {
    count(chunk);
    yield chunk;
  }
}

/**
 * An upload-pack answer without its pack: pkt-lines on side band 1 (the pack) go to `pack`, every other line
 * (NAK, ACK, shallow, progress, errors, flushes) passes on. Without side band the pack follows the last line as it
 * is, from its `PACK` signature on. `seen.packAnswer` (`nothing` until then) learns what the answer held.
 */
async function* withoutPack(
  body: AsyncIterable<Uint8Array>,
  pack: PackWriter,
  seen: HttpObservations,
): AsyncIterableIterator<Uint8Array> {
  const write = (bytes: Uint8Array) => {
    if (bytes.length > 0) seen.packAnswer = 'pack';
    return pack.write(bytes);
  };
  let pending = Buffer.alloc(0);
  let raw = false;
  for await (const chunk of body) {
    if (raw) {
      await write(chunk);
      continue;
    }
    pending = pending.length === 0 ? Buffer.from(chunk) : Buffer.concat([pending, chunk]);
    const passed: Buffer[] = [];
    let at = 0;
    while (pending.length - at >= 4) {
      const head = pending.toString('latin1', at, at + 4);
      if (head === 'PACK') {
        raw = true;
        break;
      }
      // A length that is not hex: not pkt-lines; isomorphic-git reports what it gets.
      const size = /^[0-9a-f]{4}$/i.test(head) ? Number.parseInt(head, 16) : Number.NaN;
      const length = Number.isNaN(size) ? pending.length - at : Math.max(size, 4);
      if (pending.length - at < length) break;
      const line = pending.subarray(at, at + length);
      if (length > 5 && line[4] === 1 && !Number.isNaN(size)) await write(line.subarray(5));
      else {
        if (seen.packAnswer === 'nothing' && (line[4] === 3 || line.toString('latin1', 4, 8) === 'ERR '))
          seen.packAnswer = 'refused';
        passed.push(line);
      }
      at += length;
    }
    const rest = pending.subarray(at);
    pending = raw ? Buffer.alloc(0) : Buffer.from(rest);
    if (raw) await write(rest);
    if (passed.length > 0) yield Buffer.concat(passed);
  }
  if (pending.length > 0) yield pending;
}

/**
 * isomorphic-git's HTTP plugin over node:http(s), made for one transfer, with git's (curl's) rules: redirects are
 * followed only by the transfer's first request (the ref advertisement; at most MAX_REDIRECTS), and the requests
 * after it go where it landed; credentials go only to the configured origin; https never goes to http; every
 * response is bounded in time (idle timeout, deadline) and bytes, and a pack is checked as it arrives.
 */
export interface GuardedHttpClient extends HttpClient {
  /**
   * Why the client stopped a request (a `TransportStop`), or the error writing a pack met (a full disk): the cause
   * of whatever isomorphic-git then threw, which may be an error of its own.
   */
  stopped(): unknown;
  /** After the transfer: the packs that came are checked, indexed and put in place (`ok`), or removed. */
  settle(ok: boolean): Promise<void>;
  /** Ends the requests still open (answers isomorphic-git left unread when it failed). */
  close(): void;
}

/** One client's state: its bounds, what came so far, where the first request landed, and why it stopped. */
interface Client {
  options: HttpClientOptions;
  timeoutMs: number;
  seen: HttpObservations;
  /** The transfer's rules: bytes, time, and each pack's. */
  guard: TransferGuard;
  received: number;
  /** Where the first request's redirects landed: later URLs under `from` go to `to` instead. */
  moved: { from: string; to: string } | undefined;
  stopped: unknown;
  writers: PackWriter[];
  open: Set<{ destroy(): void }>;
}

export function httpClient(options: HttpClientOptions = {}): GuardedHttpClient {
  const client: Client = {
    options,
    timeoutMs: options.timeoutMs ?? DEFAULT_HTTP_TIMEOUT_MS,
    seen: options.seen ?? {},
    guard: transferGuard({
      maxBytes: options.maxBytes ?? Number.POSITIVE_INFINITY,
      maxObjects: options.maxObjects ?? Number.POSITIVE_INFINITY,
      deadlineMs: options.deadlineMs ?? Number.POSITIVE_INFINITY,
    }),
    received: 0,
    moved: undefined,
    stopped: undefined,
    writers: [],
    open: new Set(),
  };
  return {
    stopped: () => client.stopped,
    close() {
      for (const request of [...client.open]) request.destroy();
      client.open.clear();
    },
    settle: (ok) => settle(client, ok),
    request: (request) => requestOf(client, request),
  };
}

/** Records the first reason the client stopped a request; returns it, to be thrown. */
function stop<T>(client: Client, why: T): T {
  client.stopped ??= why;
  return why;
}

/** A writer whose failures are the client's: isomorphic-git may report them as errors of its own. */
function noted(client: Client, writer: PackWriter): PackWriter {
  return {
    ...writer,
    write: (bytes) =>
      writer.write(bytes).catch((error: unknown) => {
        throw stop(client, error);
      }),
  };
}

async function settle(client: Client, ok: boolean): Promise<void> {
  const all = client.writers.splice(0);
  if (!ok) {
    await Promise.all(all.map((writer) => writer.abort()));
    return;
  }
  try {
    for (const writer of all)
      await writer.finish().catch((error: unknown) => {
        throw error instanceof TransportStop ? stop(client, error) : error;
      });
  } finally {
    await Promise.all(all.map((writer) => writer.abort()));
  }
}

async function requestOf(
  client: Client,
  { url, method = 'GET', headers = {}, body }: GitHttpRequest,
): Promise<GitHttpResponse> {
  const { options, moved } = client;
  const payload = await collect(body);
  const first = method === 'GET' && url.includes('/info/refs?');
  let current =
    moved !== undefined && url.startsWith(moved.from) ? moved.to + url.slice(moved.from.length) : url;
  for (let hop = 0; ; hop++) {
    const remainingMs = options.deadlineMs === undefined ? undefined : client.guard.remainingMs();
    if (remainingMs === 0) throw stop(client, stopOf(client.guard.overtime()));
    const own = options.origin === undefined || new URL(current).origin === options.origin;
    const response = await send(current, method, own ? headers : withoutCredentials(headers), payload, {
      timeoutMs: client.timeoutMs,
      proxy: options.proxy,
      remainingMs,
      overtime: () => stopOf(client.guard.overtime()),
      stop: (why) => stop(client, why),
      open: client.open,
    });
    const location = response.headers.location;
    if (REDIRECTS.has(response.statusCode ?? 0) && location !== undefined) {
      response.resume();
      const next = new URL(location, current);
      const refused = redirectRefused(options, current, next, first, hop);
      if (refused !== undefined) throw stop(client, refused);
      current = next.href;
      continue;
    }
    // As git's update_url_from_redirect: the base moves when the redirect kept the request's tail.
    const tail = url.slice(url.indexOf('/info/refs?'));
    if (first && current !== url && current.endsWith(tail))
      client.moved = { from: url.slice(0, -tail.length), to: current.slice(0, -tail.length) };
    return answer(client, response, current, method, first);
  }
}

/** Why a redirect from `current` to `next` is not followed (git's, curl's rules); `undefined` when it is. */
function redirectRefused(
  options: HttpClientOptions,
  current: string,
  next: URL,
  first: boolean,
  hop: number,
): TransportStop | undefined {
  const refuse = (reason: TransportStop['reason'], redirect?: 'refused' | 'too-many' | 'not-first') =>
    new TransportStop(reason, { redirect }, `redirected to ${next.href}`);
  if (current.startsWith('https:') && next.protocol !== 'https:') return refuse('source-insecure-redirect');
  if (options.redirects === 'refuse' || !['http:', 'https:'].includes(next.protocol))
    return refuse('source-redirect-refused', 'refused');
  if (!first) return refuse('source-redirect-refused', 'not-first');
  if (hop >= MAX_REDIRECTS) return refuse('source-redirect-refused', 'too-many');
  return undefined;
}

/** The response isomorphic-git gets: its body counted against the bounds, an upload-pack's pack to a writer. */
function answer(
  client: Client,
  response: IncomingMessage,
  current: string,
  method: string,
  first: boolean,
): GitHttpResponse {
  const flat: Record<string, string> = {};
  for (const [key, value] of Object.entries(response.headers))
    if (value !== undefined) flat[key] = Array.isArray(value) ? value.join(', ') : value;
  const pack = current.endsWith('/git-upload-pack') && method === 'POST';
  // isomorphic-git keeps a ref listing whole: it gets MAX_REF_LISTING_BYTES at most.
  let listed = 0;
  const counted = (chunk: Uint8Array) => {
    const over = client.guard.received((client.received += chunk.byteLength));
    if (over !== undefined) throw stop(client, stopOf(over));
    if (first && (listed += chunk.byteLength) > MAX_REF_LISTING_BYTES)
      throw stop(
        client,
        new TransportStop(
          'source-too-large',
          { listingBytes: MAX_REF_LISTING_BYTES },
          `the ref listing passed ${MAX_REF_LISTING_BYTES} bytes`,
        ),
      );
  };
  const body = watched(response, counted);
  const writer =
    pack && client.options.pack !== undefined ? noted(client, client.options.pack(client.guard)) : undefined;
  if (writer !== undefined) {
    client.writers.push(writer);
    client.seen.packAnswer = 'nothing';
  }
  return {
    url: current,
    method,
    statusCode: response.statusCode ?? 0,
    statusMessage: response.statusMessage ?? '',
    headers: flat,
    body: writer === undefined ? body : withoutPack(body, writer, client.seen),
  };
}
