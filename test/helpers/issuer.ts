import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type CryptoKey, exportJWK, generateKeyPair, type JWK, type JWTPayload, SignJWT } from 'jose';

export interface SigningKey {
  kid: string;
  privateKey: CryptoKey;
  jwk: JWK;
}

/** A key pair made in the test: ES256, its public half as a JWK with `kid`. */
export async function signingKey(kid: string): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  return { kid, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' } };
}

/** A JWT signed by `key`, with exactly these claims. */
export function signToken(key: SigningKey, claims: JWTPayload): Promise<string> {
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'ES256', kid: key.kid, typ: 'at+jwt' })
    .sign(key.privateKey);
}

export interface LoopbackIssuer {
  /** The issuer identifier: `http://127.0.0.1:<port>`. */
  issuer: string;
  jwksUrl: string;
  /** The keys the JWKS publishes now; replace to rotate. */
  keys: SigningKey[];
  /** Requests served, by path, in order. */
  requests: string[];
  /** While set, every request answers this status (an issuer that is down). */
  failWith?: number;
  close(): Promise<void>;
}

/**
 * An OAuth authorization server as a resource server sees it, on loopback: RFC 8414 metadata naming its JWKS,
 * and the JWKS of `keys` as they are at each request.
 */
export async function startIssuer(): Promise<LoopbackIssuer> {
  const state = {
    keys: [] as SigningKey[],
    requests: [] as string[],
    failWith: undefined as number | undefined,
  };
  let issuer = '';
  const server = createServer((req, res) => {
    const path = req.url ?? '/';
    state.requests.push(path);
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (state.failWith !== undefined) return send(state.failWith, { error: 'down' });
    if (path === '/.well-known/oauth-authorization-server')
      return send(200, { issuer, jwks_uri: `${issuer}/jwks.json`, response_types_supported: ['code'] });
    if (path === '/jwks.json') return send(200, { keys: state.keys.map((key) => key.jwk) });
    return send(404, { error: 'not found' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    issuer,
    jwksUrl: `${issuer}/jwks.json`,
    get keys() {
      return state.keys;
    },
    set keys(keys) {
      state.keys = keys;
    },
    get requests() {
      return state.requests;
    },
    get failWith() {
      return state.failWith;
    },
    set failWith(status) {
      state.failWith = status;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
