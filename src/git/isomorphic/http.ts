import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { HttpProxyAgent } from 'http-proxy-agent';
import { HttpsProxyAgent } from 'https-proxy-agent';
import type { GitHttpRequest, GitHttpResponse, HttpClient } from 'isomorphic-git';
import { getProxyForUrl } from 'proxy-from-env';

/** Default per-request timeout: no bytes for this long, in either direction, fails the request. */
export const DEFAULT_HTTP_TIMEOUT_MS = 30_000;
const MAX_REDIRECTS = 5;

/** A request that saw no progress for `timeoutMs`. */
export class HttpTimeoutError extends Error {
  readonly code = 'ETIMEDOUT';
  constructor(timeoutMs: number) {
    super(`no response for ${timeoutMs} ms`);
    this.name = 'HttpTimeoutError';
  }
}

async function collect(body: GitHttpRequest['body']): Promise<Buffer | undefined> {
  if (body === undefined) return undefined;
  const chunks: Uint8Array[] = [];
  for await (const chunk of body as AsyncIterable<Uint8Array>) chunks.push(chunk);
  return Buffer.concat(chunks);
}

function send(
  url: string,
  method: string,
  headers: Record<string, string>,
  body: Buffer | undefined,
  timeoutMs: number,
  proxy: string | undefined,
): Promise<IncomingMessage> {
  // git.proxy, else HTTPS_PROXY / HTTP_PROXY / ALL_PROXY unless NO_PROXY names the host, as git (curl) does.
  const via = proxy ?? (getProxyForUrl(url) || undefined);
  const https = url.startsWith('https:');
  const agent = via === undefined ? undefined : https ? new HttpsProxyAgent(via) : new HttpProxyAgent(via);
  return new Promise((resolve, reject) => {
    const request = (https ? httpsRequest : httpRequest)(url, {
      ...(agent === undefined ? {} : { agent }),
      method,
      headers: body === undefined ? headers : { ...headers, 'content-length': String(body.byteLength) },
    });
    // An idle-socket timeout, so a slow but moving transfer is fine and a stalled one is not.
    request.setTimeout(timeoutMs, () => request.destroy(new HttpTimeoutError(timeoutMs)));
    request.once('error', reject);
    request.once('response', resolve);
    request.end(body);
  });
}

/** What the client saw, for telling apart answers isomorphic-git treats alike. */
export interface HttpObservations {
  /** Bytes of the last upload-pack response body. */
  packResponseBytes?: number;
}

/** Counts the bytes of a response body as it is read. */
async function* counted(
  body: AsyncIterable<Uint8Array>,
  count: (bytes: number) => void,
): AsyncIterableIterator<Uint8Array> {
  let total = 0;
  for await (const chunk of body) {
    total += chunk.byteLength;
    yield chunk;
  }
  count(total);
}

/** isomorphic-git's HTTP plugin over node:http(s), with a timeout, redirects followed and proxies used. */
export function httpClient(
  timeoutMs = DEFAULT_HTTP_TIMEOUT_MS,
  seen: HttpObservations = {},
  proxy?: string,
): HttpClient {
  return {
    async request({ url, method = 'GET', headers = {}, body }: GitHttpRequest): Promise<GitHttpResponse> {
      const payload = await collect(body);
      let current = url;
      for (let hop = 0; ; hop++) {
        const response = await send(current, method, headers, payload, timeoutMs, proxy);
        const location = response.headers.location;
        const redirect =
          location !== undefined &&
          [301, 302, 303, 307, 308].includes(response.statusCode ?? 0) &&
          (method === 'GET' || response.statusCode === 307 || response.statusCode === 308);
        if (redirect && hop < MAX_REDIRECTS) {
          response.resume();
          current = new URL(location, current).href;
          continue;
        }
        const flat: Record<string, string> = {};
        for (const [key, value] of Object.entries(response.headers))
          if (value !== undefined) flat[key] = Array.isArray(value) ? value.join(', ') : value;
        return {
          url: current,
          method,
          statusCode: response.statusCode ?? 0,
          statusMessage: response.statusMessage ?? '',
          headers: flat,
          body:
            current.endsWith('/git-upload-pack') && method === 'POST'
              ? counted(response, (bytes) => (seen.packResponseBytes = bytes))
              : (response[Symbol.asyncIterator]() as AsyncIterableIterator<Uint8Array>),
        };
      }
    },
  };
}
