import { isSecureUrl } from '../../config/rules.ts';
import { messageOf } from '../../shared/text.ts';

/** The issuer's metadata and JWKS are read up to this size: they are remote bytes like any other. */
export const MAX_ISSUER_DOCUMENT_BYTES = 256 * 1024;
/** A request for the issuer's metadata or keys that takes longer fails. */
export const ISSUER_TIMEOUT_MS = 5_000;

/** The issuer's metadata or keys cannot be had now: no JWT can be checked until they can. */
export class IssuerUnavailable extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'IssuerUnavailable';
  }
}

/** How the issuer is fetched: the global fetch, or a test's. */
export type FetchLike = (url: string, init: RequestInit) => Promise<Response>;

async function readBounded(response: Response, url: string): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = response.body?.getReader();
  if (reader === undefined) return new Uint8Array();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_ISSUER_DOCUMENT_BYTES) {
      await reader.cancel();
      throw new IssuerUnavailable(`${url} sent more than ${MAX_ISSUER_DOCUMENT_BYTES} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

/**
 * A fetch of the issuer's documents: 200 or it fails, no redirect followed, at most MAX_ISSUER_DOCUMENT_BYTES.
 * Every failure is an IssuerUnavailable naming the URL (never a token: none is sent).
 */
export function issuerFetch(base: FetchLike = fetch): FetchLike {
  return async (url, init) => {
    let response: Response;
    try {
      response = await base(url, { ...init, redirect: 'manual' });
    } catch (error) {
      throw new IssuerUnavailable(`${url}: ${messageOf(error)}`);
    }
    if (response.status !== 200) {
      await response.body?.cancel();
      throw new IssuerUnavailable(`${url} answered HTTP ${response.status}`);
    }
    const bytes = await readBounded(response, url).catch((error: unknown) => {
      throw error instanceof IssuerUnavailable ? error : new IssuerUnavailable(`${url}: ${messageOf(error)}`);
    });
    return new Response(bytes, { status: 200, headers: { 'content-type': 'application/json' } });
  };
}

async function fetchObject(url: string, fetchImpl: FetchLike): Promise<Record<string, unknown>> {
  const response = await fetchImpl(url, {
    headers: { accept: 'application/json' },
    signal: AbortSignal.timeout(ISSUER_TIMEOUT_MS),
  });
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder().decode(await response.arrayBuffer()));
  } catch {
    throw new IssuerUnavailable(`${url} is not JSON`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new IssuerUnavailable(`${url} is not a JSON object`);
  return parsed as Record<string, unknown>;
}

/**
 * The issuer's JWKS URL from its metadata: RFC 8414 authorization server metadata (the well-known path inserted
 * before the issuer's path, §3.1), then OpenID Connect discovery (appended). The document must name exactly this
 * issuer (RFC 8414 §3.3), and its jwks_uri must be https (http only on loopback).
 */
export async function discoverJwksUrl(issuer: string, fetchImpl: FetchLike): Promise<string> {
  const url = new URL(issuer);
  const path = url.pathname.replace(/\/$/, '');
  const candidates = [
    `${url.origin}/.well-known/oauth-authorization-server${path}`,
    `${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`,
  ];
  const problems: string[] = [];
  for (const candidate of candidates) {
    try {
      const metadata = await fetchObject(candidate, fetchImpl);
      const jwksUri = metadata['jwks_uri'];
      if (metadata['issuer'] !== issuer)
        problems.push(`${candidate} names issuer ${JSON.stringify(metadata['issuer'])}, not ${issuer}`);
      else if (typeof jwksUri !== 'string' || !isSecureUrl(jwksUri))
        problems.push(`${candidate} names no https jwks_uri`);
      else return jwksUri;
    } catch (error) {
      problems.push(messageOf(error));
    }
  }
  throw new IssuerUnavailable(`no usable metadata for issuer ${issuer}: ${problems.join('; ')}`);
}
