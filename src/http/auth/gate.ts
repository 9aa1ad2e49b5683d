import type { AuthConfig } from '../../config/index.ts';
import type { Logger } from '../../shared/log.ts';
import type { FetchLike } from './issuer.ts';
import { jwtVerifier } from './jwt.ts';
import { protectedResource } from './metadata.ts';
import { staticTokens } from './tokens.ts';
import { type Authenticated, refuse, type Refused, type Verdict } from './verdict.ts';

export type { Authenticated } from './verdict.ts';

/** One gate in front of every path but /healthz, /readyz, the webhook and the metadata document. */
export interface AuthGate {
  /** The caller of `request`, or the answer refusing it: 401 with a challenge, 503 when the issuer is down. */
  authenticate(request: Request, peer: string): Promise<Authenticated | Response>;
  /** Paths of the protected resource metadata document (RFC 9728): open, GET and HEAD. */
  readonly metadataPaths: readonly string[];
  metadata(request: Request): Response;
  /** What the start-up log says about it (never a token). */
  readonly summary: { tokens: number; issuer?: string };
}

export interface AuthGateOptions {
  logger: Logger;
  /** The MCP path: the resource a static-token server protects. */
  mcpPath: string;
  /** The clock JWT validity is checked against (tests). */
  now?: () => number;
  /** How the issuer is fetched (tests); the issuer's JWKS refetch cooldown and max age (tests). */
  fetch?: FetchLike;
  jwksCooldownMs?: number;
  jwksMaxAgeMs?: number;
}

/** RFC 6750 §2.1: `Bearer` and a b64token. */
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*)$/i;
/** After a 503 for an unreachable issuer, clients are asked to wait this long. */
export const ISSUER_RETRY_AFTER_S = 10;

// RFC 9110 quoted-string: backslash and quote escaped; anything outside printable ASCII cannot be sent.
const quoted = (value: string) => `"${value.replaceAll(/[\\"]/g, '\\$&').replaceAll(/[^\x20-\x7e]/g, ' ')}"`;

/**
 * Static bearer tokens (checked first, in constant time) and OAuth JWTs (when `oauth` is configured). A refused
 * request is logged with its reason and the client's address, never with what it sent.
 */
export function createAuthGate(auth: AuthConfig, options: AuthGateOptions): AuthGate {
  const { logger } = options;
  const resource = protectedResource(auth, options.mcpPath);
  const byToken = staticTokens(auth.tokens);
  const jwt =
    auth.oauth === undefined
      ? undefined
      : jwtVerifier(auth.oauth, {
          now: options.now,
          fetch: options.fetch,
          cooldownMs: options.jwksCooldownMs,
          maxAgeMs: options.jwksMaxAgeMs,
          onStaleKeys: (why) =>
            logger.warn({ err: why }, 'issuer unreachable: checking JWTs with its last keys'),
        });
  const scope = auth.oauth === undefined ? '' : `, scope=${quoted(Object.keys(auth.oauth.scopes).join(' '))}`;

  const verdictOf = async (header: string | null): Promise<Verdict> => {
    if (header === null || header === '')
      return refuse('auth-missing', 'this server requires a bearer token');
    const token = BEARER.exec(header)?.[1];
    if (token === undefined)
      return refuse('auth-token-invalid', 'the Authorization header is not "Bearer <token>"');
    const known = byToken(token);
    if (known !== undefined) return { ok: true, ...known };
    return jwt === undefined ? refuse('auth-token-invalid', 'the bearer token is not valid') : jwt(token);
  };

  const refusal = (request: Request, { reason, description }: Refused): Response => {
    if (reason === 'auth-issuer-unavailable')
      return Response.json(
        { error: 'temporarily_unavailable', error_description: description },
        { status: 503, headers: { 'retry-after': String(ISSUER_RETRY_AFTER_S) } },
      );
    const metadata = `resource_metadata=${quoted(resource.metadataUrl(request))}`;
    // RFC 6750 §3.1: a request that carried no credentials gets no error code.
    const challenge =
      reason === 'auth-missing'
        ? `Bearer ${metadata}${scope}`
        : `Bearer error="invalid_token", error_description=${quoted(description)}, ${metadata}${scope}`;
    return Response.json(
      { error: 'invalid_token', error_description: description },
      { status: 401, headers: { 'www-authenticate': challenge } },
    );
  };

  return {
    async authenticate(request, peer) {
      const verdict = await verdictOf(request.headers.get('authorization'));
      const path = new URL(request.url).pathname;
      if (!verdict.ok) {
        logger.warn({ reason: verdict.reason, peer, path }, `request refused: ${verdict.description}`);
        return refusal(request, verdict);
      }
      logger.debug({ principal: verdict.caller.id, peer, path }, 'request authenticated');
      return { caller: verdict.caller, authInfo: verdict.authInfo };
    },
    metadataPaths: resource.paths,
    metadata: (request) =>
      Response.json(resource.document(request), {
        headers: { 'access-control-allow-origin': '*', 'cache-control': 'max-age=3600' },
      }),
    summary: { tokens: auth.tokens.length, issuer: auth.oauth?.issuer },
  };
}
