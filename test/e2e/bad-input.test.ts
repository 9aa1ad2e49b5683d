import { mkdtempSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SkillsClient } from '@modelcontextprotocol/client/ext/skills';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli } from '../helpers/cli.ts';
import { fixture } from '../helpers/fixtures.ts';
import { connectHttp, writeConfig } from '../helpers/server.ts';
import { type InProcessServer, serveInProcess } from '../helpers/serving.ts';

const catalog = fixture('catalog');
const c2 = catalog.commits['c2']!;

/** POSTs an empty JSON object with exactly these headers (fetch would not let us set Host). */
function statusOf(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...headers,
        },
      },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.once('error', reject);
    req.end('{}');
  });
}

describe('a bad config', () => {
  it('exits 78 with one message naming the file and the key, and serves nothing', async () => {
    const file = writeConfig({ sources: [{ id: 'a', path: catalog.gitdir, commit: c2, pathz: ['skills'] }] });
    const run = await cli('serve', '--config', file);
    expect(run.status).toBe(78);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe(
      `skillpin: ${file}:6:5: sources[0]: unknown key "pathz"; did you mean "paths"?\n`,
    );
  });

  it('exits 64 on a malformed --http address', async () => {
    const file = writeConfig({ sources: [{ id: 'a', path: catalog.gitdir, commit: c2 }] });
    const run = await cli('serve', '--config', file, '--http', 'localhost');
    expect(run.status).toBe(64);
    expect(run.stderr).toContain('expected <host>:<port>');
  });
});

describe('sources that cannot be served', () => {
  let server: InProcessServer;
  beforeAll(async () => {
    const notARepo = mkdtempSync(path.join(tmpdir(), 'skillpin-not-a-repo-'));
    server = await serveInProcess(
      writeConfig({
        sources: [
          { id: 'good', path: catalog.gitdir, commit: c2, paths: ['skills'] },
          { id: 'not-a-repo', path: notARepo, ref: 'HEAD' },
          { id: 'no-such-commit', path: catalog.gitdir, commit: 'f'.repeat(40) },
          { id: 'no-such-ref', path: catalog.gitdir, ref: 'release/9' },
        ],
      }),
    );
  });
  afterAll(async () => server.stop());

  it('are each reported with a stable reason while the good source serves', async () => {
    const health = await (await fetch(server.url.replace('/mcp', '/healthz'))).json();
    expect(health).toEqual({
      status: 'degraded',
      serving: 1,
      failing: 3,
      failures: [
        { id: 'not-a-repo', reason: 'source-not-a-repository' },
        { id: 'no-such-commit', reason: 'source-commit-not-found' },
        { id: 'no-such-ref', reason: 'source-ref-not-found' },
      ],
    });
    const { client, close } = await connectHttp(server.url, 'modern');
    const listing = await new SkillsClient(client).list();
    expect(listing.skills.length).toBe(7);
    expect(new Set(listing.skills.map((s) => s.uri.split('/')[2]))).toEqual(new Set(['good']));
    await close();
  });

  it('logs each failure with its reason', async () => {
    const line = server
      .logs()
      .split('\n')
      .find((l) => l.includes('"source":"no-such-ref"'))!;
    expect(JSON.parse(line)).toMatchObject({
      level: 'error',
      source: 'no-such-ref',
      reason: 'source-ref-not-found',
      why: 'start',
      serving: null,
      msg: 'the repository has no ref "release/9"',
    });
  });

  it('refuses a request whose Host or Origin is not loopback (DNS rebinding)', async () => {
    const { port } = new URL(server.url);
    expect(await statusOf(server.url, { host: `evil.example:${port}` })).toBe(403);
    expect(await statusOf(server.url, { origin: 'http://evil.example' })).toBe(403);
    expect(
      await statusOf(server.url, { host: `localhost:${port}`, origin: `http://localhost:${port}` }),
    ).toBe(400);
  });
});
