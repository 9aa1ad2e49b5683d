import { connect } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createCatalog } from '../../src/catalog/index.ts';
import { createAuthGate } from '../../src/http/auth/gate.ts';
import {
  BODY_DEADLINE_MS,
  BODY_RETRY_AFTER_S,
  MAX_BODY_BYTES_IN_FLIGHT,
  MAX_REQUEST_BODY_BYTES,
} from '../../src/http/bodyBudget.ts';
import {
  type HttpOptions,
  MCP_PATH,
  type RunningHttpServer,
  startHttpServer,
} from '../../src/http/server.ts';
import { createServerFactory } from '../../src/mcp/server.ts';
import { until } from '../helpers/until.ts';

const MiB = 1024 * 1024;
const TOKEN = 'bounds-token-0123456789abcdef';

// A full collection before each reading, so memory measured is memory held.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const heldMemory = () => {
  gc();
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  return heapUsed + arrayBuffers;
};

let server: RunningHttpServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(options: Pick<HttpOptions, 'auth' | 'limits'> = {}) {
  const catalog = createCatalog();
  const logger = pino({ level: 'silent' });
  server = await startHttpServer({
    listen: { host: '127.0.0.1', port: 0 },
    serving: { factory: createServerFactory({ catalog, logger }), catalog },
    webhooks: {
      secret: 'bounds-webhook-secret',
      maxBodyBytes: MiB,
      sources: () => [],
      worker: { trigger: () => undefined },
    },
    logger,
    ...options,
  });
  return Number(new URL(server.url).port);
}

/** A client on a raw socket: it sends exactly what it is told and keeps what the server answers. */
function rawClient(port: number) {
  const socket = connect(port, '127.0.0.1');
  let received = '';
  let closed = false;
  socket.on('data', (chunk: Buffer) => {
    received += chunk.toString('latin1');
  });
  socket.on('close', () => {
    closed = true;
  });
  socket.on('error', () => undefined);
  return {
    send: (data: string | Buffer) => new Promise<void>((resolve) => socket.write(data, () => resolve())),
    received: () => received,
    status: () => /^HTTP\/1\.1 (\d{3})/.exec(received)?.[1],
    closed: () => closed,
    destroy: () => socket.destroy(),
  };
}

const head = (port: number, path: string, length: number, extra = '') =>
  `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\n` +
  `Accept: application/json, text/event-stream\r\nContent-Length: ${length}\r\n${extra}\r\n`;

describe('request bodies', () => {
  it('has the documented limits', () => {
    expect([MAX_BODY_BYTES_IN_FLIGHT, BODY_DEADLINE_MS, MAX_REQUEST_BODY_BYTES, BODY_RETRY_AFTER_S]).toEqual([
      64 * MiB,
      10_000,
      4 * MiB,
      5,
    ]);
  });

  it('holds no more than the in-flight bound: past it senders get 503 and their bytes are not kept', async () => {
    const port = await start({ limits: { body: { inFlightBytes: 4 * MiB, deadlineMs: 60_000 } } });
    // 64 bodies of 1 MiB + 1 byte, each sent but for its last byte: 3 fit in 4 MiB. The senders share one buffer,
    // so that what this process holds beyond `before` is the server's.
    const payload = Buffer.from(head(port, MCP_PATH, MiB + 1) + 'x'.repeat(MiB));
    const before = heldMemory();
    const clients = Array.from({ length: 64 }, () => rawClient(port));
    await Promise.all(clients.map((client) => client.send(payload)));
    const answered = () => clients.filter((client) => client.status() !== undefined);
    await until('every sender past the bound to be answered', () => answered().length === 61);
    // Held now: the three bodies in flight (their senders keep their connections, so a server that kept the refused
    // bodies would hold them still). A refused body's bytes may be on their way through its socket to be dropped
    // for a moment on a loaded machine: a few looks, each after a turn of the event loop and a collection.
    let heldBytes = heldMemory() - before;
    for (let look = 0; look < 20 && heldBytes >= 16 * MiB; look++) {
      await new Promise((resolve) => setImmediate(resolve));
      heldBytes = heldMemory() - before;
    }
    expect(heldBytes).toBeLessThan(16 * MiB);
    expect(answered().map((client) => client.status())).toEqual(Array(61).fill('503'));
    expect(answered()[0]!.received()).toMatch(/\r\nretry-after: 5\r\n/i);
    // The three held are served once their last byte comes (not JSON: a parse error).
    const held = clients.filter((client) => client.status() === undefined);
    await Promise.all(held.map((client) => client.send('x')));
    await until('the held bodies to be served', () => held.every((client) => client.status() === '400'));
    for (const client of clients) client.destroy();
  });

  it('refuses a body its head does not allow before reading it: the answer comes while the body is unsent', async () => {
    const auth = createAuthGate(
      { tokens: [{ name: 'ci', token: TOKEN }] },
      { logger: pino({ level: 'silent' }), mcpPath: MCP_PATH },
    );
    const port = await start({ auth });
    const noToken = rawClient(port);
    await noToken.send(head(port, MCP_PATH, 4 * MiB) + 'x'.repeat(64 * 1024));
    await until('the 401', () => noToken.status(), 5_000);
    expect([noToken.status(), noToken.received()]).toEqual([
      '401',
      expect.stringMatching(/\r\nwww-authenticate: Bearer resource_metadata=/i),
    ]);
    // A webhook delivery that carries no signature at all is refused the same way.
    const unsigned = rawClient(port);
    await unsigned.send(head(port, '/hooks/git', MiB, 'X-GitHub-Event: push\r\n') + 'x'.repeat(64 * 1024));
    await until('the webhook 401', () => unsigned.status(), 5_000);
    expect(unsigned.received()).toContain('"error":"bad or missing X-Hub-Signature-256"');
    // A client that waits for 100 Continue is told 401 instead; one with its token is asked for its body.
    const waiting = rawClient(port);
    await waiting.send(head(port, MCP_PATH, 2, 'Expect: 100-continue\r\n'));
    await until('the answer to the wait', () => waiting.status(), 5_000);
    expect(waiting.status()).toBe('401');
    const allowed = rawClient(port);
    await allowed.send(head(port, MCP_PATH, 2, `Expect: 100-continue\r\nAuthorization: Bearer ${TOKEN}\r\n`));
    await until('the 100 Continue', () => allowed.status(), 5_000);
    expect(allowed.status()).toBe('100');
    for (const client of [noToken, unsigned, waiting, allowed]) client.destroy();
  });

  it('gives a body a deadline of its own: one that stops coming is answered 408 within it, and closed', async () => {
    const port = await start({ limits: { body: { deadlineMs: 300 } } });
    const slow = rawClient(port);
    const started = Date.now();
    await slow.send(head(port, MCP_PATH, 100) + '{"jsonrpc":');
    await until('the 408 and the close', () => slow.closed(), 5_000);
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    expect([slow.status(), slow.received()]).toEqual([
      '408',
      expect.stringContaining('"error":"the body did not arrive within 300 ms"'),
    ]);
  });
});

describe('the Host header', () => {
  it('answers 400 to a Host with userinfo, as to any Host that is not host[:port]', async () => {
    const port = await start();
    for (const host of ['x@127.0.0.1', '127.0.0.1/healthz', `x@127.0.0.1:${port}`]) {
      const client = rawClient(port);
      await client.send(`GET /healthz HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
      await until('the answer', () => client.closed(), 5_000);
      expect([client.status(), client.received()]).toEqual([
        '400',
        expect.stringContaining('"error":"the Host header is not a host name with an optional port"'),
      ]);
    }
  });
});
