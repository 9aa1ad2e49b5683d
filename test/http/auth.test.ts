import { SkillsClient } from '@modelcontextprotocol/client/ext/skills';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { createCatalog } from '../../src/catalog/index.ts';
import type { AuthConfig } from '../../src/config/index.ts';
import { type AuthGateOptions, createAuthGate } from '../../src/http/auth/gate.ts';
import { JWKS_MAX_AGE_MS, JWT_CLOCK_SKEW_S, VERIFIED_TOKEN_MS } from '../../src/http/auth/jwt.ts';
import { createMetrics } from '../../src/http/metrics.ts';
import {
  MCP_PATH,
  METRICS_FORBIDDEN,
  type RunningHttpServer,
  startHttpServer,
} from '../../src/http/server.ts';
import { createServerFactory } from '../../src/mcp/server.ts';
import type { StatusReport } from '../../src/shared/status.ts';
import { namespaceOf } from '../helpers/catalog.ts';
import { fixture } from '../helpers/fixtures.ts';
import {
  type LoopbackIssuer,
  type SigningKey,
  signingKey,
  signToken,
  startIssuer,
} from '../helpers/issuer.ts';
import { capturingLogger, type LogLine } from '../helpers/logs.ts';
import { connectHttp } from '../helpers/server.ts';
import { cachePolicy } from '../../src/mcp/cache.ts';

const catalogRepo = fixture('catalog');
const rootRepo = fixture('root-skill');
const AUDIENCE = 'https://skills.example.test/mcp';
const METADATA_URL = 'https://skills.example.test/.well-known/oauth-protected-resource/mcp';
const SCOPE = 'scope="skills:read skills:catalog"';
const CI_TOKEN = 'ci-token-0123456789abcdef';
const ADMIN_TOKEN = 'admin-token-fedcba9876543210';
const NOW_S = Date.parse('2026-03-01T12:00:00Z') / 1000;

const sourceStatus = (id: string) => ({
  id,
  repository: `local:${id}`,
  ref: null,
  current: null,
  retained: [],
  syncing: false,
  lastSync: null,
  lastSuccess: null,
  nextSync: null,
  lastError: { reason: 'source-timeout' as const, detail: `${id} timed out`, at: '2026-03-01T12:00:00.000Z' },
});
const STATUS: StatusReport = {
  version: 2,
  sources: [sourceStatus('catalog'), sourceStatus('root')],
  failures: [
    { id: 'catalog', reason: 'source-timeout', detail: 'catalog timed out' },
    { id: 'root', reason: 'source-timeout', detail: 'root timed out' },
  ],
};

interface Running {
  url: string;
  lines: LogLine[];
  text: () => string;
  server: RunningHttpServer;
}

/** The HTTP server as serve wires it, over two sources (catalog, root), with `auth`. */
async function startServer(auth: AuthConfig, gate: Partial<AuthGateOptions> = {}): Promise<Running> {
  const catalog = createCatalog({
    sources: [
      {
        id: 'catalog',
        current: await namespaceOf('catalog', catalogRepo.gitdir, catalogRepo.commits['c2']!, ['skills']),
        retained: [],
      },
      {
        id: 'root',
        current: await namespaceOf('root', rootRepo.gitdir, rootRepo.commits['c1']!),
        retained: [],
      },
    ],
    failures: [],
  });
  const { logger, lines, text } = capturingLogger();
  const server = await startHttpServer({
    listen: { host: '127.0.0.1', port: 0 },
    serving: {
      factory: createServerFactory({ catalog, logger, cache: cachePolicy() }),
      catalog,
      pending: () => ['root'],
      status: () => STATUS,
      metrics: createMetrics({ catalog, status: () => STATUS, process: false }),
    },
    logger,
    auth: createAuthGate(auth, { logger, mcpPath: MCP_PATH, now: () => NOW_S * 1000, ...gate }),
  });
  return { url: server.url, lines, text, server };
}

const post = (url: string, headers: Record<string, string> = {}) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: '{}' });

/** The sources a caller with `token` sees listed (2026-07-28). */
async function listedSources(url: string, token: string): Promise<string[]> {
  const { client, close } = await connectHttp(url, 'modern', token);
  try {
    const { skills } = await new SkillsClient(client).list();
    return [...new Set(skills.map((skill) => skill.uri.split('/')[2]!))].sort();
  } finally {
    await close();
  }
}

const refusals = (lines: LogLine[]) =>
  lines.filter((line) => line.msg.startsWith('request refused')).map((line) => line['reason']);

describe('static bearer tokens', () => {
  let running: Running;
  const auth: AuthConfig = {
    tokens: [
      { name: 'ci', token: CI_TOKEN, sources: ['catalog'] },
      { name: 'admin', token: ADMIN_TOKEN },
    ],
  };
  beforeAll(async () => {
    running = await startServer(auth);
  });
  afterAll(async () => running.server.close());

  it('answers a request without a token 401 with a challenge naming the metadata document', async () => {
    const answer = await post(running.url);
    const origin = new URL(running.url).origin;
    expect([answer.status, answer.headers.get('www-authenticate'), await answer.json()]).toEqual([
      401,
      `Bearer resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp"`,
      { error: 'invalid_token', error_description: 'this server requires a bearer token' },
    ]);
    expect(refusals(running.lines).at(-1)).toBe('auth-missing');
  });

  it('guards the status page and /metrics as it guards /mcp (refusals at warn); the page shows the caller its sources, metrics only a caller of every source', async () => {
    const at = (path: string) => running.url.replace(MCP_PATH, path);
    const answers = await Promise.all([fetch(at('/')), fetch(at('/metrics'))]);
    expect(answers.map((answer) => answer.status)).toEqual([401, 401]);
    const refused = running.lines.filter((line) => line.msg.startsWith('request refused')).slice(-2);
    expect(refused.map((line) => [line.level, line['path']]).sort()).toEqual([
      [40, '/'],
      [40, '/metrics'],
    ]);
    const ci = { authorization: `Bearer ${CI_TOKEN}` };
    const [page, metrics] = await Promise.all([
      fetch(at('/'), { headers: ci }),
      fetch(at('/metrics'), { headers: ci }),
    ]);
    expect([page.status, metrics.status, await metrics.json()]).toEqual([
      200,
      403,
      { error: METRICS_FORBIDDEN },
    ]);
    const html = await page.text();
    expect([html.includes('catalog timed out'), html.includes('root timed out')]).toEqual([true, false]);
    const everything = await fetch(at('/metrics'), { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(everything.status).toBe(200);
    expect(await everything.text()).toContain('skillpin_source_skills{source="root"}');
  });

  it('refuses a token that is not configured, a malformed header and another scheme, never logging them', async () => {
    const origin = new URL(running.url).origin;
    const bad = await post(running.url, { authorization: 'Bearer not-the-token-0123456789' });
    expect([bad.status, bad.headers.get('www-authenticate'), await bad.json()]).toEqual([
      401,
      `Bearer error="invalid_token", error_description="the bearer token is not valid", resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp"`,
      { error: 'invalid_token', error_description: 'the bearer token is not valid' },
    ]);
    const basic = await post(running.url, {
      authorization: `Basic ${Buffer.from(`x:${CI_TOKEN}`).toString('base64')}`,
    });
    expect([basic.status, ((await basic.json()) as { error_description: string }).error_description]).toEqual(
      [401, 'the Authorization header is not "Bearer <token>"'],
    );
    // A token with a character RFC 6750 does not allow, or the right token with a suffix.
    for (const header of [`Bearer ${CI_TOKEN} x`, `Bearer ${CI_TOKEN}x`])
      expect((await post(running.url, { authorization: header })).status).toBe(401);
    expect(refusals(running.lines).slice(-4)).toEqual([
      'auth-token-invalid',
      'auth-token-invalid',
      'auth-token-invalid',
      'auth-token-invalid',
    ]);
    expect(running.text()).not.toContain('not-the-token');
    expect(running.text()).not.toContain(CI_TOKEN);
  });

  it('lets each principal see its sources, and logs it by name, never by token', async () => {
    expect(await listedSources(running.url, CI_TOKEN)).toEqual(['catalog']);
    expect(await listedSources(running.url, ADMIN_TOKEN)).toEqual(['catalog', 'root']);
    const principals = new Set(
      running.lines.filter((line) => line.msg === 'request authenticated').map((line) => line['principal']),
    );
    expect([...principals].sort()).toEqual(['token:admin', 'token:ci']);
    expect(running.text()).not.toContain(CI_TOKEN);
    expect(running.text()).not.toContain(ADMIN_TOKEN);
  });

  it('keeps /healthz and /readyz open, naming and counting no source; /status needs a token and shows only what it sees', async () => {
    const at = (path: string) => running.url.replace(MCP_PATH, path);
    const health = await fetch(at('/healthz'));
    expect([health.status, await health.json()]).toEqual([200, { status: 'ok' }]);
    const ready = await fetch(at('/readyz'));
    expect([ready.status, await ready.json()]).toEqual([503, { ready: false }]);
    expect((await fetch(at('/status'))).status).toBe(401);
    expect(
      (await fetch(at('/status'), { headers: { authorization: 'Bearer nope-nope-nope-nope' } })).status,
    ).toBe(401);
  });

  it('publishes protected resource metadata for the URL the request came to', async () => {
    const origin = new URL(running.url).origin;
    for (const path of [
      '/.well-known/oauth-protected-resource',
      '/.well-known/oauth-protected-resource/mcp',
    ]) {
      const answer = await fetch(`${origin}${path}`);
      expect([answer.status, answer.headers.get('access-control-allow-origin'), await answer.json()]).toEqual(
        [
          200,
          '*',
          { resource: `${origin}/mcp`, bearer_methods_supported: ['header'], resource_name: 'skillpin' },
        ],
      );
    }
    const put = await fetch(`${origin}/.well-known/oauth-protected-resource`, { method: 'PUT' });
    expect([put.status, put.headers.get('allow')]).toEqual([405, 'GET, HEAD']);
  });
});

describe('OAuth JWTs', () => {
  let issuer: LoopbackIssuer;
  let keyA: SigningKey;
  let keyB: SigningKey;
  let keyC: SigningKey;
  let running: Running;
  const oauthOf = (extra: Partial<NonNullable<AuthConfig['oauth']>> = {}): AuthConfig => ({
    tokens: [],
    oauth: {
      issuer: issuer.issuer,
      audience: AUDIENCE,
      scopes: { 'skills:read': '*', 'skills:catalog': ['catalog'] },
      ...extra,
    },
  });
  const claims = (extra: Record<string, unknown> = {}) => ({
    iss: issuer.issuer,
    aud: AUDIENCE,
    sub: 'alice@example.test',
    scope: 'skills:read',
    iat: NOW_S - 60,
    exp: NOW_S + 300,
    ...extra,
  });
  const jwksFetches = () => issuer.requests.filter((path) => path === '/jwks.json').length;
  /** The status, the error description and the reason logged for a request with this token. */
  const outcome = async (target: Running, token: string) => {
    const answer = await post(target.url, { authorization: `Bearer ${token}` });
    const body = (await answer.json()) as { error_description?: string };
    return [answer.status, body.error_description ?? null, refusals(target.lines).at(-1) ?? null];
  };

  beforeAll(async () => {
    issuer = await startIssuer();
    [keyA, keyB, keyC] = await Promise.all([signingKey('key-a'), signingKey('key-b'), signingKey('key-c')]);
    issuer.keys = [keyA];
    // The JWKS URL comes from the issuer's metadata (RFC 8414): jwksUrl is not configured.
    running = await startServer(oauthOf());
  });
  afterAll(async () => {
    await running.server.close();
    await issuer.close();
  });
  beforeEach(() => {
    issuer.keys = [keyA];
    issuer.failWith = undefined;
  });

  it('accepts a token of the issuer for this audience, its scope deciding what it sees', async () => {
    expect(await listedSources(running.url, await signToken(keyA, claims()))).toEqual(['catalog', 'root']);
    expect(
      await listedSources(running.url, await signToken(keyA, claims({ scope: 'skills:catalog' }))),
    ).toEqual(['catalog']);
    // scp as an array, as some issuers send it; an unmapped scope adds nothing.
    expect(
      await listedSources(
        running.url,
        await signToken(keyA, claims({ scope: undefined, scp: ['openid', 'skills:catalog'] })),
      ),
    ).toEqual(['catalog']);
    // Authenticated, but no mapped scope: it sees nothing (200, an empty listing).
    expect(
      await listedSources(running.url, await signToken(keyA, claims({ scope: 'openid profile' }))),
    ).toEqual([]);
    expect(issuer.requests.slice(0, 2)).toEqual(['/.well-known/oauth-authorization-server', '/jwks.json']);
    const principal = running.lines.filter((line) => line.msg === 'request authenticated').at(-1)?.[
      'principal'
    ];
    expect(principal).toBe('oauth:alice@example.test');
    // Claims of the wrong type name nobody and grant nothing (the issuer signs them; jose does not type them).
    expect(await listedSources(running.url, await signToken(keyA, claims({ sub: 42, scope: 7 })))).toEqual(
      [],
    );
    const nobody = running.lines.filter((line) => line.msg === 'request authenticated').at(-1)?.['principal'];
    expect(nobody).toBe('oauth:(no subject)');
  });

  it('refuses an expired token, and one not valid yet, beyond a 30 s clock skew', async () => {
    expect(JWT_CLOCK_SKEW_S).toBe(30);
    expect(await listedSources(running.url, await signToken(keyA, claims({ exp: NOW_S - 29 })))).toEqual([
      'catalog',
      'root',
    ]);
    expect(await outcome(running, await signToken(keyA, claims({ exp: NOW_S - 31 })))).toEqual([
      401,
      'the token has expired',
      'auth-token-expired',
    ]);
    expect(await outcome(running, await signToken(keyA, claims({ nbf: NOW_S + 31 })))).toEqual([
      401,
      'the token is not valid yet (nbf)',
      'auth-token-expired',
    ]);
    expect(await outcome(running, await signToken(keyA, claims({ exp: undefined })))).toEqual([
      401,
      'the token has no expiry (exp)',
      'auth-token-invalid',
    ]);
  });

  it('refuses a token for another audience, from another issuer, or with a forged signature', async () => {
    expect(
      await outcome(running, await signToken(keyA, claims({ aud: 'https://other.example.test/mcp' }))),
    ).toEqual([401, `the token is not meant for ${AUDIENCE}`, 'auth-audience-mismatch']);
    expect(
      await outcome(running, await signToken(keyA, claims({ iss: 'https://evil.example.test' }))),
    ).toEqual([401, `the token was not issued by ${issuer.issuer}`, 'auth-issuer-mismatch']);
    // Key B's signature under key A's kid.
    const forged = await signToken({ ...keyB, kid: 'key-a' }, claims());
    expect(await outcome(running, forged)).toEqual([
      401,
      'the token signature does not verify',
      'auth-token-invalid',
    ]);
    const answer = await post(running.url, { authorization: `Bearer ${forged}` });
    expect(answer.headers.get('www-authenticate')).toBe(
      `Bearer error="invalid_token", error_description="the token signature does not verify", resource_metadata="${METADATA_URL}", ${SCOPE}`,
    );
  });

  it('fetches the JWKS again for an unknown kid only after the cooldown', async () => {
    const fresh = await startServer(oauthOf({ jwksUrl: issuer.jwksUrl }));
    try {
      await listedSources(fresh.url, await signToken(keyA, claims()));
      const before = jwksFetches();
      issuer.keys = [keyA, keyB];
      // Within the 30 s cooldown after that fetch: an unknown kid costs no request to the issuer.
      expect(await outcome(fresh, await signToken(keyB, claims()))).toEqual([
        401,
        "the token's signing key is not among the issuer's keys",
        'auth-key-unknown',
      ]);
      expect(jwksFetches()).toBe(before);
    } finally {
      await fresh.server.close();
    }
  });

  it('follows a key rotation: a new kid is fetched, a withdrawn key stops verifying', async () => {
    const rotating = await startServer(oauthOf({ jwksUrl: issuer.jwksUrl }), { jwksCooldownMs: 0 });
    try {
      const fetchesAt = () => jwksFetches();
      const start = fetchesAt();
      expect(await listedSources(rotating.url, await signToken(keyA, claims()))).toEqual(['catalog', 'root']);
      expect(fetchesAt()).toBe(start + 1);
      issuer.keys = [keyA, keyB];
      expect(await listedSources(rotating.url, await signToken(keyB, claims()))).toEqual(['catalog', 'root']);
      expect(fetchesAt()).toBe(start + 2);
      issuer.keys = [keyB];
      expect(await outcome(rotating, await signToken(keyC, claims()))).toEqual([
        401,
        "the token's signing key is not among the issuer's keys",
        'auth-key-unknown',
      ]);
      expect(await outcome(rotating, await signToken(keyA, claims()))).toEqual([
        401,
        "the token's signing key is not among the issuer's keys",
        'auth-key-unknown',
      ]);
      expect(fetchesAt()).toBe(start + 4);
      // The configured jwksUrl is used as given: no metadata request from this server.
      expect(issuer.requests.filter((path) => path !== '/jwks.json')).toEqual([
        '/.well-known/oauth-authorization-server',
      ]);
    } finally {
      await rotating.server.close();
    }
  });

  it('keeps checking with the last keys while the issuer is down, and answers 503 when it never had any', async () => {
    const stale = await startServer(oauthOf({ jwksUrl: issuer.jwksUrl }), { jwksMaxAgeMs: 0 });
    const never = await startServer(oauthOf());
    try {
      expect(await listedSources(stale.url, await signToken(keyA, claims()))).toEqual(['catalog', 'root']);
      issuer.failWith = 500;
      expect(await listedSources(stale.url, await signToken(keyA, claims()))).toEqual(['catalog', 'root']);
      expect(
        stale.lines.some((line) => line.msg === 'issuer unreachable: checking JWTs with its last keys'),
      ).toBe(true);

      const answer = await post(never.url, { authorization: `Bearer ${await signToken(keyA, claims())}` });
      expect([answer.status, answer.headers.get('retry-after'), await answer.json()]).toEqual([
        503,
        '10',
        {
          error: 'temporarily_unavailable',
          error_description: "the issuer's keys cannot be fetched now; try again later",
        },
      ]);
      expect(refusals(never.lines).at(-1)).toBe('auth-issuer-unavailable');
      // Discovery failed a moment ago (the injected clock has not moved): it is not tried on every request.
      const asked = issuer.requests.length;
      expect(
        (await post(never.url, { authorization: `Bearer ${await signToken(keyA, claims())}` })).status,
      ).toBe(503);
      expect(issuer.requests.length).toBe(asked);
    } finally {
      await stale.server.close();
      await never.server.close();
    }
  });

  /** What the gate says of a request with this token: 'ok', or the refusal's description. */
  const checkWith = (gate: ReturnType<typeof createAuthGate>) => async (token: string) => {
    const headers = { authorization: `Bearer ${token}` };
    const verdict = await gate.authenticate(
      new Request('http://127.0.0.1/mcp', { method: 'POST', headers }),
      'test',
    );
    return verdict instanceof Response
      ? ((await verdict.json()) as { error_description: string }).error_description
      : 'ok';
  };

  it('stops honouring a withdrawn key within a minute with the default key age and memory', async () => {
    expect([JWKS_MAX_AGE_MS, VERIFIED_TOKEN_MS]).toEqual([30_000, 30_000]);
    // jose ages its key set by Date.now(); the gate remembers tokens by its own clock: both move together.
    vi.useFakeTimers({ toFake: ['Date'], now: NOW_S * 1000 });
    try {
      const gate = createAuthGate(oauthOf({ jwksUrl: issuer.jwksUrl }), {
        logger: capturingLogger().logger,
        mcpPath: MCP_PATH,
        now: () => Date.now(),
      });
      const check = checkWith(gate);
      const token = await signToken(keyA, claims({ exp: NOW_S + 3600 }));
      expect(await check(token)).toBe('ok');
      issuer.keys = [keyB];
      vi.setSystemTime(NOW_S * 1000 + 59_000);
      const late = await signToken(keyA, claims({ exp: NOW_S + 3600, jti: 'another' }));
      expect([await check(token), await check(late)]).toEqual([
        "the token's signing key is not among the issuer's keys",
        "the token's signing key is not among the issuer's keys",
      ]);
    } finally {
      vi.useRealTimers();
      issuer.keys = [keyA];
    }
  });

  it('remembers a verified token for at most 30 s, and never past its exp', async () => {
    let now = NOW_S * 1000;
    const { logger } = capturingLogger();
    // The JWKS is fetched again for every check that is not remembered (max age 0).
    const gate = createAuthGate(oauthOf({ jwksUrl: issuer.jwksUrl }), {
      logger,
      mcpPath: MCP_PATH,
      now: () => now,
      jwksMaxAgeMs: 0,
      jwksCooldownMs: 0,
    });
    const check = checkWith(gate);
    const long = await signToken(keyA, claims({ exp: NOW_S + 3600 }));
    const short = await signToken(keyA, claims({ exp: NOW_S + 10 }));
    expect([await check(long), await check(short)]).toEqual(['ok', 'ok']);
    const fetched = jwksFetches();
    issuer.keys = [];
    // Remembered: no signature check, so the withdrawn key does not matter yet.
    expect([await check(long), await check(short)]).toEqual(['ok', 'ok']);
    expect(jwksFetches()).toBe(fetched);
    issuer.keys = [keyA];
    now += (10 + JWT_CLOCK_SKEW_S) * 1000 + 1;
    expect(await check(short)).toBe('the token has expired');
    issuer.keys = [];
    now = NOW_S * 1000 + VERIFIED_TOKEN_MS;
    expect(await check(long)).toBe("the token's signing key is not among the issuer's keys");
  });

  it('answers 401 with the audience metadata URL and the scopes, and publishes the document naming the issuer', async () => {
    const answer = await post(running.url);
    expect([answer.status, answer.headers.get('www-authenticate')]).toEqual([
      401,
      `Bearer resource_metadata="${METADATA_URL}", ${SCOPE}`,
    ]);
    const origin = new URL(running.url).origin;
    for (const path of [
      '/.well-known/oauth-protected-resource',
      '/.well-known/oauth-protected-resource/mcp',
    ]) {
      const document = await fetch(`${origin}${path}`);
      expect(await document.json()).toEqual({
        resource: AUDIENCE,
        authorization_servers: [issuer.issuer],
        scopes_supported: ['skills:read', 'skills:catalog'],
        bearer_methods_supported: ['header'],
        resource_name: 'skillpin',
      });
    }
  });
});
