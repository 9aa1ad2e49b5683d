import {
  createLocalJWKSet,
  createRemoteJWKSet,
  customFetch,
  type JWTPayload,
  type JWTVerifyGetKey,
  jwtVerify,
} from 'jose';
import { EVERY_SOURCE, onlySources, type Visibility } from '../../catalog/index.ts';
import type { OAuthConfig } from '../../config/index.ts';
import { authInfoFor } from '../../mcp/caller.ts';
import { messageOf } from '../../shared/text.ts';
import {
  discoverJwksUrl,
  type FetchLike,
  ISSUER_TIMEOUT_MS,
  issuerFetch,
  IssuerUnavailable,
} from './issuer.ts';
import { refuse, type Verdict } from './verdict.ts';

/** Clocks disagree a little: exp and nbf are checked with this much slack, in seconds. */
export const JWT_CLOCK_SKEW_S = 30;
/** Public-key signatures only: a shared-secret (HS*) or unsigned token is never accepted. */
export const JWT_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
];
/** After a fetch of the JWKS, an unknown `kid` fetches it again only this much later (a flood of bad kids). */
export const JWKS_COOLDOWN_MS = 30_000;
/**
 * The JWKS is fetched again when it is older than this: a key the issuer withdrew stops verifying. With
 * VERIFIED_TOKEN_MS, a withdrawn key is honoured at most a minute (docs/http-and-auth.md's promise; a test holds them to it).
 */
export const JWKS_MAX_AGE_MS = 30_000;
/** After discovery of the issuer's JWKS URL failed, it is tried again this much later, not on every request. */
export const DISCOVERY_RETRY_MS = 10_000;
/**
 * A verified token is remembered this long at most, never past its `exp` (with the skew), so a host sending the
 * same token on every request pays for one signature check every 30 s.
 */
export const VERIFIED_TOKEN_MS = 30_000;
/** Verified tokens remembered at most (the least recently verified is forgotten first). */
export const VERIFIED_TOKENS = 1024;

export interface JwtVerifierOptions {
  now?: () => number;
  fetch?: FetchLike;
  cooldownMs?: number;
  maxAgeMs?: number;
  /** Told when the issuer cannot be reached and the last keys fetched are used instead. */
  onStaleKeys?: (why: string) => void;
}

const MAX_PRINCIPAL_LENGTH = 200;

/** Scopes as RFC 8693/9068 carry them (`scope`, space-separated) or as some issuers do (`scp`, an array). */
function scopesOf(payload: JWTPayload): string[] {
  const { scope, scp } = payload as { scope?: unknown; scp?: unknown };
  const words = (value: unknown) => (typeof value === 'string' ? value.split(' ').filter(Boolean) : []);
  if (typeof scope === 'string') return words(scope);
  if (Array.isArray(scp)) return scp.filter((item): item is string => typeof item === 'string');
  return words(scp);
}

function refusalOf(error: unknown, oauth: OAuthConfig): Verdict {
  if (error instanceof IssuerUnavailable)
    return refuse('auth-issuer-unavailable', "the issuer's keys cannot be fetched now; try again later");
  const { code, claim, reason } = error as { code?: string; claim?: string; reason?: string };
  switch (code) {
    case 'ERR_JWT_EXPIRED':
      return refuse('auth-token-expired', 'the token has expired');
    case 'ERR_JWT_CLAIM_VALIDATION_FAILED':
      if (claim === 'nbf') return refuse('auth-token-expired', 'the token is not valid yet (nbf)');
      if (claim === 'iss')
        return refuse('auth-issuer-mismatch', `the token was not issued by ${oauth.issuer}`);
      if (claim === 'aud')
        return refuse('auth-audience-mismatch', `the token is not meant for ${oauth.audience}`);
      if (claim === 'exp' && reason === 'missing')
        return refuse('auth-token-invalid', 'the token has no expiry (exp)');
      return refuse('auth-token-invalid', `the token's "${claim}" claim is not valid`);
    case 'ERR_JWKS_NO_MATCHING_KEY':
      return refuse('auth-key-unknown', "the token's signing key is not among the issuer's keys");
    case 'ERR_JWKS_TIMEOUT':
    case 'ERR_JWKS_INVALID':
      return refuse('auth-issuer-unavailable', "the issuer's keys cannot be fetched now; try again later");
    case 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED':
      return refuse('auth-token-invalid', 'the token signature does not verify');
    case 'ERR_JOSE_ALG_NOT_ALLOWED':
      return refuse(
        'auth-token-invalid',
        'the token is signed with an algorithm this server does not accept',
      );
    default:
      return refuse('auth-token-invalid', 'the bearer token is not valid');
  }
}

type LocalKeys = ReturnType<typeof createLocalJWKSet>;

/**
 * The issuer's JWKS fetched through `fetchImpl`, with a copy of the last good set kept: it serves while the
 * issuer cannot be reached. The keys are fetched again on an unknown `kid` after the cooldown, and when older
 * than their max age.
 */
function remoteKeys(url: string, fetchImpl: FetchLike, options: JwtVerifierOptions): JWTVerifyGetKey {
  let lastKeys: LocalKeys | undefined;
  // The JWKS bytes jose reads pass through here.
  const keepingLast: FetchLike = async (input, init) => {
    const response = await fetchImpl(input, init);
    const text = await response.text();
    try {
      lastKeys = createLocalJWKSet(JSON.parse(text));
    } catch {
      // jose reports the bad document itself.
    }
    return new Response(text, { status: 200, headers: response.headers });
  };
  const remote = createRemoteJWKSet(new URL(url), {
    timeoutDuration: ISSUER_TIMEOUT_MS,
    cooldownDuration: options.cooldownMs ?? JWKS_COOLDOWN_MS,
    cacheMaxAge: options.maxAgeMs ?? JWKS_MAX_AGE_MS,
    [customFetch]: keepingLast,
  });
  return async (header, token) => {
    try {
      return await remote(header, token);
    } catch (error) {
      if (!(error instanceof IssuerUnavailable) || lastKeys === undefined) throw error;
      options.onStaleKeys?.(messageOf(error));
      return lastKeys(header, token);
    }
  };
}

/**
 * The issuer's keys, once its JWKS URL is known (configured, or discovered from the issuer's metadata). A failed
 * discovery is tried again DISCOVERY_RETRY_MS later, not on every request; until then it fails as it did.
 */
function issuerKeys(
  oauth: OAuthConfig,
  options: JwtVerifierOptions,
  now: () => number,
): () => Promise<JWTVerifyGetKey> {
  const fetchImpl = issuerFetch(options.fetch);
  let resolver: JWTVerifyGetKey | undefined;
  let discovering: Promise<JWTVerifyGetKey> | undefined;
  let discoveryFailed: { at: number; error: IssuerUnavailable } | undefined;
  const discover = async () =>
    remoteKeys(oauth.jwksUrl ?? (await discoverJwksUrl(oauth.issuer, fetchImpl)), fetchImpl, options);
  return async () => {
    if (resolver !== undefined) return resolver;
    if (discoveryFailed !== undefined && now() - discoveryFailed.at < DISCOVERY_RETRY_MS)
      throw discoveryFailed.error;
    discovering ??= discover();
    try {
      resolver = await discovering;
      return resolver;
    } catch (error) {
      discoveryFailed = {
        at: now(),
        error: error instanceof IssuerUnavailable ? error : new IssuerUnavailable(messageOf(error)),
      };
      throw discoveryFailed.error;
    } finally {
      discovering = undefined;
    }
  };
}

/** The union of the sources a token's mapped scopes name; nothing when none is mapped. */
function visibilityOfScopes(
  scopeMap: ReadonlyMap<string, string[] | '*'>,
  scopes: readonly string[],
): Visibility {
  const ids = new Set<string>();
  for (const scope of scopes) {
    const seen = scopeMap.get(scope);
    if (seen === '*') return EVERY_SOURCE;
    for (const id of seen ?? []) ids.add(id);
  }
  return onlySources(ids);
}

/** The caller a verified token names: its subject (else its client), and the sources its scopes allow. */
function acceptedVerdict(
  token: string,
  payload: JWTPayload,
  scopeMap: ReadonlyMap<string, string[] | '*'>,
): Verdict {
  const scopes = scopesOf(payload);
  const { client_id: clientId, azp } = payload as { client_id?: unknown; azp?: unknown };
  // Claims are typed by the issuer, not by jose: only strings name anyone.
  const strings = [clientId, azp, payload.sub].filter((value): value is string => typeof value === 'string');
  const client = strings[0] ?? '';
  const sub = typeof payload.sub === 'string' ? payload.sub : client;
  const subject = sub.slice(0, MAX_PRINCIPAL_LENGTH) || '(no subject)';
  const caller = { id: `oauth:${subject}`, visibility: visibilityOfScopes(scopeMap, scopes) };
  return {
    ok: true,
    caller,
    authInfo: authInfoFor(caller, { value: token, clientId: client, scopes, expiresAt: payload.exp! }),
  };
}

/** Verified tokens, each until it must be checked again; the least recently verified is forgotten first. */
function verifiedTokens() {
  const verified = new Map<string, { verdict: Verdict; until: number }>();
  return {
    get(token: string, at: number): Verdict | undefined {
      const known = verified.get(token);
      if (known !== undefined && at < known.until) return known.verdict;
      verified.delete(token);
      return undefined;
    },
    set(token: string, verdict: Verdict, until: number): void {
      verified.set(token, { verdict, until });
      if (verified.size > VERIFIED_TOKENS) verified.delete(verified.keys().next().value!);
    },
  };
}

/**
 * Checks OAuth 2.1 access tokens (JWTs) as a resource server: signature by a key of the issuer's JWKS (cached,
 * fetched again on an unknown `kid` after the cooldown, and when older than its max age; the last keys serve
 * while the issuer cannot be reached), `iss`, `aud`, `exp` (required) and `nbf` with a small skew; a verified
 * token is remembered for VERIFIED_TOKEN_MS. The token's scopes decide what it sees: the union of the sources
 * its mapped scopes name, nothing when none is mapped.
 */
export function jwtVerifier(
  oauth: OAuthConfig,
  options: JwtVerifierOptions = {},
): (token: string) => Promise<Verdict> {
  const now = options.now ?? Date.now;
  const keys = issuerKeys(oauth, options, now);
  const scopeMap = new Map(Object.entries(oauth.scopes));
  const verified = verifiedTokens();

  return async (token) => {
    const at = now();
    const known = verified.get(token, at);
    if (known !== undefined) return known;
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, await keys(), {
        issuer: oauth.issuer,
        audience: oauth.audience,
        algorithms: JWT_ALGORITHMS,
        clockTolerance: JWT_CLOCK_SKEW_S,
        currentDate: new Date(at),
        requiredClaims: ['exp'],
      }));
    } catch (error) {
      return refusalOf(error, oauth);
    }
    const verdict = acceptedVerdict(token, payload, scopeMap);
    verified.set(token, verdict, Math.min(at + VERIFIED_TOKEN_MS, (payload.exp! + JWT_CLOCK_SKEW_S) * 1000));
    return verdict;
  };
}
