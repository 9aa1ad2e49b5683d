import { request } from 'node:http';
import path from 'node:path';
import { SkillsClient } from '@modelcontextprotocol/client/ext/skills';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixture, fixtureFile } from '../helpers/fixtures.ts';
import { connectHttp, writeConfig } from '../helpers/server.ts';
import { type InProcessServer, serveInProcess } from '../helpers/serving.ts';
import { tempDir } from '../helpers/temp.ts';
import { until } from '../helpers/until.ts';

const catalog = fixture('catalog');
const c2 = catalog.commits['c2']!;
const SECRET = 'hook-s3cret';

/** A request with exactly these headers (fetch would not let us set Host); the status and body. */
function send(
  url: string,
  method: string,
  headers: Record<string, string>,
  body = '',
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.once('error', reject);
    req.end(body);
  });
}

/** The samples of an exposition, `name{labels}` → value; comments left out. */
function samples(text: string): Map<string, number> {
  const map = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const cut = line.lastIndexOf(' ');
    map.set(line.slice(0, cut), Number(line.slice(cut + 1)));
  }
  return map;
}

const only = (all: Map<string, number>, prefix: string) =>
  Object.fromEntries([...all].filter(([key]) => key.startsWith(prefix)));

describe('GET /metrics and the logs of a server with http.metrics: true', () => {
  let server: InProcessServer;
  let base: string;
  let missing: string;
  const scrape = async () => samples(await (await fetch(`${base}/metrics`)).text());

  beforeAll(async () => {
    missing = path.join(tempDir(), 'nope');
    const config = writeConfig({
      http: { metrics: true },
      // One failure and no retry within the test: the counts below are exact.
      sync: { retryMin: '1h', retryMax: '1h' },
      webhook: { secret: '${HOOK_SECRET}', maxBodyBytes: 1024 },
      sources: [
        { id: 'catalog', path: catalog.gitdir, commit: c2, paths: ['skills'] },
        { id: 'broken', path: missing, ref: 'main' },
      ],
    });
    server = await serveInProcess(config, { logLevel: 'debug', env: { HOOK_SECRET: SECRET } });
    base = new URL(server.url).origin;
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('counts requests, bytes, sessions, syncs, sources, problems and webhooks, with bounded labels only', async () => {
    const modern = await connectHttp(server.url, 'modern');
    const skills = new SkillsClient(modern.client);
    const { skills: entries } = await skills.list();
    const forms = entries.find((entry) => entry.uri.endsWith('/skills/pdf-forms/SKILL.md'))!;
    await skills.read(forms, 'references/FORMS.md');
    await expect(
      modern.client.readResource({ uri: `skill://catalog/${c2}/skills/nothing/SKILL.md` }),
    ).rejects.toThrow();
    const legacy = await connectHttp(server.url, 'legacy');

    const hook = `${base}/hooks/git`;
    const json = { 'content-type': 'application/json' };
    expect((await send(hook, 'POST', { ...json, authorization: 'Bearer wrong' }, '{}')).status).toBe(401);
    expect(
      (await send(hook, 'POST', { ...json, authorization: `Bearer ${SECRET}` }, ' '.repeat(2048))).status,
    ).toBe(413);
    const body = JSON.stringify({ source: 'catalog' });
    expect((await send(hook, 'POST', { ...json, authorization: `Bearer ${SECRET}` }, body)).status).toBe(202);
    // The webhook's sync of the pinned commit finds nothing new.
    const all = await until('the triggered sync', async () => {
      const now = await scrape();
      return (
        now.get('skillpin_sync_duration_seconds_count{source="catalog",result="unchanged"}') === 1 && now
      );
    });

    // The 2026-07-28 client discovers first; the 2025-11-25 one initializes.
    expect(only(all, 'skillpin_mcp_request_duration_seconds_count')).toEqual({
      'skillpin_mcp_request_duration_seconds_count{method="server/discover",outcome="ok"}': 1,
      'skillpin_mcp_request_duration_seconds_count{method="initialize",outcome="ok"}': 1,
      'skillpin_mcp_request_duration_seconds_count{method="skills/list",outcome="ok"}': 1,
      'skillpin_mcp_request_duration_seconds_count{method="resources/read",outcome="ok"}': 1,
      'skillpin_mcp_request_duration_seconds_count{method="resources/read",outcome="invalid_params"}': 1,
    });
    expect(only(all, 'skillpin_served_bytes_total')).toEqual({
      'skillpin_served_bytes_total{source="catalog"}': fixtureFile(
        'catalog',
        'c2',
        'skills/pdf-forms/references/FORMS.md',
      ).byteLength,
    });
    expect(all.get('skillpin_sessions_open')).toBe(1);
    expect(only(all, 'skillpin_sync_duration_seconds_count')).toEqual({
      'skillpin_sync_duration_seconds_count{source="catalog",result="updated"}': 1,
      'skillpin_sync_duration_seconds_count{source="catalog",result="unchanged"}': 1,
      'skillpin_sync_duration_seconds_count{source="broken",result="failed"}': 1,
    });
    expect(only(all, 'skillpin_sync_failures_total')).toEqual({
      'skillpin_sync_failures_total{source="broken",reason="source-not-a-repository"}': 1,
    });
    expect(only(all, 'skillpin_source_failing')).toEqual({
      'skillpin_source_failing{source="broken",reason="source-not-a-repository"}': 1,
    });
    expect(Object.keys(only(all, 'skillpin_source_last_success_age_seconds'))).toEqual([
      'skillpin_source_last_success_age_seconds{source="catalog"}',
    ]);
    expect(all.get('skillpin_source_last_success_age_seconds{source="catalog"}')).toBeGreaterThanOrEqual(0);
    expect(only(all, 'skillpin_source_')).toMatchObject({
      'skillpin_source_commits{source="catalog",state="current"}': 1,
      'skillpin_source_commits{source="catalog",state="retained"}': 0,
      'skillpin_source_skills{source="catalog"}': 7,
    });
    expect(only(all, 'skillpin_source_problems')).toEqual({
      'skillpin_source_problems{source="catalog",reason="name-invalid",severity="error"}': 1,
      'skillpin_source_problems{source="catalog",reason="name-mismatch",severity="warning"}': 1,
      'skillpin_source_problems{source="catalog",reason="description-missing",severity="error"}': 1,
      'skillpin_source_problems{source="catalog",reason="frontmatter-missing",severity="error"}': 1,
    });
    expect(only(all, 'skillpin_webhook_deliveries_total')).toEqual({
      'skillpin_webhook_deliveries_total{outcome="webhook-unauthorized"}': 1,
      'skillpin_webhook_deliveries_total{outcome="webhook-too-large"}': 1,
      'skillpin_webhook_deliveries_total{outcome="webhook-triggered"}': 1,
    });
    // Process metrics ride along; no label names a URI, a skill or a path.
    expect(all.has('process_cpu_user_seconds_total')).toBe(true);
    const labels = [...all.keys()].join('\n');
    expect([labels.includes('skill://'), labels.includes(missing), labels.includes('pdf-forms')]).toEqual([
      false,
      false,
      false,
    ]);
    await legacy.close();
    await modern.close();
  });

  it('logs one line per request at debug and a refused Host at warn', async () => {
    const { port } = new URL(server.url);
    const refused = await send(`${base}/status`, 'GET', { host: `evil.example:${port}` });
    expect(refused.status).toBe(403);
    await fetch(`${base}/healthz?token=in-the-query`);
    const lines = await until('both lines', () => {
      const parsed = server
        .logs()
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      const warned = parsed.find((line) => line['host'] === `evil.example:${port}`);
      const healthz = parsed.find((line) => line['msg'] === 'http request' && line['path'] === '/healthz');
      return warned !== undefined && healthz !== undefined && { warned, healthz };
    });
    expect(lines.warned).toMatchObject({ level: 'warn', path: '/status', origin: null });
    expect(lines.healthz).toMatchObject({ level: 'debug', method: 'GET', status: 200 });
    expect(server.logs()).not.toContain('in-the-query');
  });

  it('says where it serves with a URL a client can use, and logs that it stopped', async () => {
    const serving = server
      .logs()
      .split('\n')
      .find((line) => line.includes('"msg":"serving MCP over Streamable HTTP'))!;
    expect(JSON.parse(serving)).toMatchObject({ level: 'info', url: server.url });
    await server.stop();
    expect(server.logs().trim().split('\n').at(-1)).toMatch(
      /^\{"level":"info","time":"[^"]+","msg":"stopped"\}$/,
    );
  });
});
