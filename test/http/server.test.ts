import { createHmac } from 'node:crypto';
import { request } from 'node:http';
import { Writable } from 'node:stream';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { SkillsClient } from '@modelcontextprotocol/client/ext/skills';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCatalog } from '../../src/catalog/index.ts';
import type { SourceConfig } from '../../src/config/index.ts';
import { PEER_HEADER } from '../../src/http/listener.ts';
import { startHttpServer, type RunningHttpServer } from '../../src/http/server.ts';
import { createServerFactory } from '../../src/mcp/server.ts';
import { namespaceOf } from '../helpers/catalog.ts';
import { fixture } from '../helpers/fixtures.ts';

const catalogRepo = fixture('catalog');
const c2 = catalogRepo.commits['c2']!;
const SECRET = 'whsec-server-test';
const MiB = 1024 * 1024;
const REPO_URL = 'https://git.example/acme/skills.git';
const source: SourceConfig = {
  id: 'remote',
  location: { kind: 'remote', url: REPO_URL },
  target: { kind: 'ref', ref: 'main' },
  paths: [],
  strictNames: false,
  keep: 2,
  timeoutMs: 30_000,
};

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/**
 * One HTTP exchange with exactly this method, headers and body, from `localAddress`: over once the answer is read
 * and the body sent (an answer may come before the body is all sent).
 */
function send(
  url: string,
  method: string,
  headers: Record<string, string> = {},
  body?: Uint8Array | string,
  localAddress = '127.0.0.1',
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers, localAddress });
    const sent = new Promise((done) => req.once('finish', done));
    req.once('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        sent.then(() =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString(),
          }),
        ),
      );
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** A logger whose lines the test reads. */
function capturingLogger() {
  const lines: Array<{ level: number; msg: string }> = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { logger: pino({ level: 'debug' }, stream), lines };
}

async function startServer(options: { now?: () => number; sessionLimits?: Record<string, number> } = {}) {
  const ns = await namespaceOf('catalog', catalogRepo.gitdir, c2, ['skills']);
  const catalog = createCatalog({ sources: [{ id: 'catalog', current: ns, retained: [] }], failures: [] });
  const { logger, lines } = capturingLogger();
  const triggered: string[] = [];
  const factory = createServerFactory({ catalog, logger });
  const server = await startHttpServer({
    listen: { host: '127.0.0.1', port: 0 },
    serving: { factory, catalog },
    webhooks: {
      secret: SECRET,
      maxBodyBytes: 8 * MiB,
      sources: () => [source],
      worker: { trigger: (id) => triggered.push(id) },
    },
    logger,
    ...(options.now === undefined ? {} : { now: options.now }),
    ...(options.sessionLimits === undefined ? {} : { limits: { sessions: options.sessionLimits } }),
  });
  return { server, lines, triggered };
}

describe('the HTTP endpoint', () => {
  let server: RunningHttpServer;
  let lines: Array<{ level: number; msg: string }>;
  let triggered: string[];
  const at = (path: string) => server.url.replace('/mcp', path);
  beforeAll(async () => {
    ({ server, lines, triggered } = await startServer());
  });
  afterAll(async () => server.close());

  it('answers 405 with Allow to methods a path does not serve, and logs no error', async () => {
    const trace = await send(server.url, 'TRACE');
    expect([trace.status, trace.headers['allow']]).toEqual([405, 'POST, GET, DELETE']);
    const put = await send(at('/healthz'), 'PUT');
    expect([put.status, put.headers['allow'], JSON.parse(put.body)]).toEqual([
      405,
      'GET, HEAD',
      { error: 'PUT is not served here; use GET, HEAD' },
    ]);
    expect((await send(at('/status'), 'DELETE')).status).toBe(405);
    expect((await send(at('/hooks/git'), 'GET')).status).toBe(405);
    expect((await send(at('/healthz'), 'GET')).status).toBe(200);
    expect(lines.filter((line) => line.level >= 50)).toEqual([]);
  });

  it('serves neither /metrics nor the status page unless it was given them', async () => {
    const metrics = await send(at('/metrics'), 'GET');
    expect([metrics.status, JSON.parse(metrics.body)]).toEqual([
      404,
      { error: 'metrics are off; set http.metrics: true' },
    ]);
    expect((await send(at('/'), 'GET')).status).toBe(404);
    expect((await send(at('/metrics'), 'POST')).headers['allow']).toBe('GET, HEAD');
  });

  it('verifies webhook signatures over the bytes sent: a BOM and a byte that is not UTF-8 pass', async () => {
    const push = JSON.stringify({
      ref: 'refs/heads/main',
      repository: { clone_url: REPO_URL },
      note: 'Caf~',
    });
    const withBom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(push)]);
    const latin1 = Buffer.from(push);
    latin1[push.indexOf('~')] = 0xe9;
    for (const body of [withBom, latin1]) {
      const signature = `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`;
      const answer = await send(
        at('/hooks/git'),
        'POST',
        { 'x-github-event': 'push', 'x-hub-signature-256': signature, 'content-type': 'application/json' },
        body,
      );
      expect([answer.status, JSON.parse(answer.body)]).toEqual([202, { triggered: ['remote'] }]);
    }
    expect(triggered).toEqual(['remote', 'remote']);
  });

  it('takes a signed 5 MiB push under maxBodyBytes 8 MiB, and refuses 9 MiB with 413', async () => {
    const sized = (bytes: number) => {
      const head = JSON.stringify({ ref: 'refs/heads/main', repository: { clone_url: REPO_URL }, pad: '' });
      return Buffer.from(head.replace('"pad":""', `"pad":"${'x'.repeat(bytes - head.length)}"`));
    };
    const sign = (body: Buffer) => `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`;
    const five = sized(5 * MiB);
    expect(five.byteLength).toBe(5 * MiB);
    const accepted = await send(
      at('/hooks/git'),
      'POST',
      { 'x-github-event': 'push', 'x-hub-signature-256': sign(five), 'content-type': 'application/json' },
      five,
    );
    expect([accepted.status, JSON.parse(accepted.body)]).toEqual([202, { triggered: ['remote'] }]);
    const nine = sized(9 * MiB);
    const refused = await send(
      at('/hooks/git'),
      'POST',
      { 'x-github-event': 'push', 'x-hub-signature-256': sign(nine), 'content-type': 'application/json' },
      nine,
    );
    expect([refused.status, JSON.parse(refused.body)]).toEqual([
      413,
      { error: `body larger than ${8 * MiB} bytes` },
    ]);
  });
});

describe('2025-11-25 session churn', () => {
  const initialize = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'flood', version: '1' } },
  });
  const open = (url: string, address: string, headers: Record<string, string> = {}) =>
    send(
      url,
      'POST',
      { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      initialize,
      address,
    );

  it('keeps a session in use while others flood in, and expires it once idle', async () => {
    let now = 0;
    const { server } = await startServer({
      now: () => now,
      sessionLimits: { maxSessions: 3, perAddressPerMinute: 2, protectedMs: 60_000, idleMs: 600_000 },
    });
    const client = new Client({ name: 'live', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(server.url));
    await client.connect(transport);
    const live = new SkillsClient(client);
    expect((await live.list()).skills.length).toBe(7);

    // Two sessions from one address, then its third is refused; the store is full of recent sessions.
    expect((await open(server.url, '127.0.0.2')).status).toBe(200);
    expect((await open(server.url, '127.0.0.2')).status).toBe(200);
    const tooMany = await open(server.url, '127.0.0.2', { [PEER_HEADER]: '203.0.113.9' });
    expect([tooMany.status, tooMany.headers['retry-after']]).toEqual([429, '60']);
    const full = await open(server.url, '127.0.0.3');
    expect([full.status, JSON.parse(full.body).error.message]).toEqual([
      503,
      'all 3 sessions are in use; retry later',
    ]);

    // Two minutes on, the live session is used again; new sessions take the place of the idle flood.
    now = 120_000;
    expect((await live.list()).skills.length).toBe(7);
    expect((await open(server.url, '127.0.0.3')).status).toBe(200);
    expect((await open(server.url, '127.0.0.4')).status).toBe(200);
    expect((await open(server.url, '127.0.0.5')).status).toBe(503);
    expect((await live.list()).skills.length).toBe(7);

    // Idle past the limit: closed at the next sweep, and its next request is told so.
    now = 120_000 + 600_000;
    expect((await open(server.url, '127.0.0.6')).status).toBe(200);
    const gone = await live.list().then(
      () => 'served',
      (error: Error) => error.message,
    );
    expect(gone).toContain('Session not found');
    await client.close().catch(() => undefined);
    await server.close();
  });
});

describe('a server bound to every interface', () => {
  it('names its MCP endpoint by loopback, never 0.0.0.0, and says what it is bound to', async () => {
    const catalog = createCatalog();
    const logger = pino({ level: 'silent' });
    const server = await startHttpServer({
      listen: { host: '0.0.0.0', port: 0 },
      serving: { factory: createServerFactory({ catalog, logger }), catalog },
      logger,
    });
    try {
      const { port } = new URL(server.url);
      expect([server.url, server.listening]).toEqual([`http://127.0.0.1:${port}/mcp`, `0.0.0.0:${port}`]);
      expect((await send(server.url.replace('/mcp', '/healthz'), 'GET')).status).toBe(200);
    } finally {
      await server.close();
    }
  });
});
