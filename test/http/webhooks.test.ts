import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { SourceConfig } from '../../src/config/index.ts';
import { createDeliveryLog, REPLAY_WINDOW_MS } from '../../src/http/deliveries.ts';
import { sameSecret } from '../../src/http/secrets.ts';
import { handleWebhook, type WebhookOutcome } from '../../src/http/webhooks.ts';
import { silentLogger } from '../../src/shared/logger.ts';

const SECRET = 'whsec-5b1e0c';
const URL_OF_REPO = 'https://git.example/acme/skills.git';

const remote = (id: string, ref: string): SourceConfig => ({
  id,
  location: { kind: 'remote', url: URL_OF_REPO },
  target: { kind: 'ref', ref },
  paths: [],
  strictNames: false,
  keep: 2,
  timeoutMs: 30_000,
});
const sources = [remote('main', 'main'), remote('head', 'HEAD'), remote('release', 'v2')];

/** A webhook handler with a recording trigger, the outcomes it told, and a clock the test moves. */
function hook(configured: readonly SourceConfig[] = sources) {
  const triggered: string[] = [];
  const outcomes: WebhookOutcome[] = [];
  let now = 1_000_000;
  const options = {
    secret: SECRET,
    sources: configured,
    trigger: (id: string) => triggered.push(id),
    deliveries: createDeliveryLog(() => now),
    logger: silentLogger(),
    onOutcome: (outcome: WebhookOutcome) => outcomes.push(outcome),
  };
  return {
    triggered,
    outcomes,
    advance: (ms: number) => {
      now += ms;
    },
    send: async (body: Uint8Array | string, headers: Record<string, string>) => {
      const response = await handleWebhook(
        new Request('http://127.0.0.1/hooks/git', { method: 'POST', headers, body }),
        options,
      );
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    },
  };
}

const bytes = (text: string) => new TextEncoder().encode(text);
const sign = (body: Uint8Array) => `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`;
const githubPush = (ref = 'refs/heads/main') =>
  JSON.stringify({ ref, repository: { clone_url: URL_OF_REPO, default_branch: 'main' } });
const github = (body: Uint8Array, extra: Record<string, string> = {}) => ({
  'x-github-event': 'push',
  'x-hub-signature-256': sign(body),
  'content-type': 'application/json',
  ...extra,
});

describe('webhook deliveries', () => {
  it('verifies the HMAC over the raw bytes: a body with a BOM is accepted', async () => {
    const body = new Uint8Array([0xef, 0xbb, 0xbf, ...bytes(githubPush())]);
    const { send, triggered } = hook();
    expect(await send(body, github(body))).toEqual({ status: 202, body: { triggered: ['main', 'head'] } });
    expect(triggered).toEqual(['main', 'head']);
  });

  it('verifies the HMAC over the raw bytes: a body with a byte that is not UTF-8 is accepted', async () => {
    const text = JSON.stringify({
      ref: 'refs/heads/main',
      repository: { clone_url: URL_OF_REPO },
      head_commit: { message: 'Caf~' },
    });
    const body = bytes(text);
    body[text.indexOf('~')] = 0xe9;
    const { send } = hook();
    expect(await send(body, github(body))).toEqual({ status: 202, body: { triggered: ['main'] } });
  });

  it("accepts GitHub's form-encoded deliveries (payload=…), signed over the form bytes", async () => {
    const body = bytes(`payload=${encodeURIComponent(githubPush('refs/tags/v2'))}`);
    const { send } = hook();
    const headers = github(body, { 'content-type': 'application/x-www-form-urlencoded' });
    expect(await send(body, headers)).toEqual({ status: 202, body: { triggered: ['release'] } });
    const noPayload = bytes('other=1');
    expect(
      await send(noPayload, github(noPayload, { 'content-type': 'application/x-www-form-urlencoded' })),
    ).toEqual({ status: 400, body: { error: 'a form-encoded delivery needs a "payload" field' } });
  });

  it('refuses a signed body whose ref is not a string with 400, and syncs nothing', async () => {
    const body = bytes(JSON.stringify({ ref: {}, repository: { clone_url: URL_OF_REPO } }));
    const { send, triggered } = hook();
    expect(await send(body, github(body))).toEqual({
      status: 400,
      body: { error: 'not a GitHub push event: ref: Invalid input: expected string, received object' },
    });
    const notJson = bytes('{"ref": ');
    expect(await send(notJson, github(notJson))).toEqual({
      status: 400,
      body: { error: 'the payload is not a JSON object' },
    });
    const generic = bytes(JSON.stringify({ source: ['main'] }));
    expect(
      await send(generic, { authorization: `Bearer ${SECRET}`, 'content-type': 'application/json' }),
    ).toEqual({
      status: 400,
      body: {
        error:
          'not a {"source": "<source id>", "ref"?: "<ref>"} event: source: Invalid input: expected string, received array',
      },
    });
    expect(triggered).toEqual([]);
  });

  it('acknowledges a replayed delivery without syncing again, and syncs it after the window', async () => {
    const body = bytes(githubPush());
    const { send, triggered, advance } = hook();
    const headers = github(body, { 'x-github-delivery': '72d3162e-cc78-11e3-81ab-4c9367dc0958' });
    expect(await send(body, headers)).toEqual({ status: 202, body: { triggered: ['main', 'head'] } });
    advance(REPLAY_WINDOW_MS - 1);
    expect(await send(body, headers)).toEqual({ status: 200, body: { replayed: true, triggered: [] } });
    expect(triggered).toEqual(['main', 'head']);
    advance(1);
    expect(await send(body, headers)).toEqual({ status: 202, body: { triggered: ['main', 'head'] } });
    const other = github(body, { 'x-github-delivery': 'another-delivery' });
    expect((await send(body, other)).status).toBe(202);
    expect(triggered).toEqual(['main', 'head', 'main', 'head', 'main', 'head']);
  });

  it('checks the GitLab token and the bearer secret, and answers 401 to a wrong or missing one', async () => {
    const gitlab = bytes(
      JSON.stringify({
        ref: 'refs/heads/main',
        project: { git_http_url: URL_OF_REPO, default_branch: 'main' },
      }),
    );
    const generic = bytes(JSON.stringify({ source: 'release' }));
    const { send, triggered } = hook();
    const asGitlab = (token: string) => ({ 'x-gitlab-event': 'Push Hook', 'x-gitlab-token': token });
    expect(await send(gitlab, asGitlab(SECRET))).toEqual({
      status: 202,
      body: { triggered: ['main', 'head'] },
    });
    expect(await send(gitlab, asGitlab(`${SECRET}x`))).toEqual({
      status: 401,
      body: { error: 'bad or missing X-Gitlab-Token' },
    });
    expect(await send(gitlab, asGitlab(SECRET.slice(0, -1)))).toMatchObject({ status: 401 });
    expect(await send(generic, { authorization: `Bearer ${SECRET}` })).toEqual({
      status: 202,
      body: { triggered: ['release'] },
    });
    expect(await send(generic, { authorization: `Bearer ${SECRET.toUpperCase()}` })).toEqual({
      status: 401,
      body: { error: 'bad or missing bearer token' },
    });
    const body = bytes(githubPush());
    expect(await send(body, github(body, { 'x-hub-signature-256': sign(bytes('other')) }))).toEqual({
      status: 401,
      body: { error: 'bad or missing X-Hub-Signature-256' },
    });
    expect(triggered).toEqual(['main', 'head', 'release']);
  });

  it('tells how each delivery ended by its webhook- reason code', async () => {
    const body = bytes(githubPush());
    const { send, outcomes } = hook();
    const once = github(body, { 'x-github-delivery': 'd-1' });
    const statuses = [
      await send(body, github(body, { 'x-hub-signature-256': sign(bytes('other')) })),
      await send(body, github(body, { 'x-github-event': 'ping' })),
      await send(body, github(body, { 'x-github-event': 'issues' })),
      await send(bytes('[]'), github(bytes('[]'))),
      await send(body, once),
      await send(body, once),
    ].map((answer) => answer.status);
    expect(statuses).toEqual([401, 200, 202, 400, 202, 200]);
    expect(outcomes).toEqual([
      'webhook-unauthorized',
      'webhook-ping',
      'webhook-ignored',
      'webhook-invalid',
      'webhook-triggered',
      'webhook-replayed',
    ]);
  });

  it('compares secrets of any length without throwing, over their digests', () => {
    expect(sameSecret(SECRET, SECRET)).toBe(true);
    expect(sameSecret('', SECRET)).toBe(false);
    expect(sameSecret(`${SECRET}${'x'.repeat(1000)}`, SECRET)).toBe(false);
    expect(sameSecret('é', 'e\u0301')).toBe(false);
  });

  it('syncs a refs: source when a push, a created or deleted tag or branch, or a generic event names a ref it follows', async () => {
    const policies: SourceConfig = {
      ...remote('policies', 'unused'),
      target: { kind: 'refs', patterns: ['v*', 'refs/heads/release/*'], maxRefs: 50 },
    };
    const { send, triggered } = hook([...sources, policies]);
    const push = bytes(githubPush('refs/tags/v3.0.0'));
    expect(await send(push, github(push))).toEqual({ status: 202, body: { triggered: ['policies'] } });
    const other = bytes(githubPush('refs/tags/x3'));
    expect(await send(other, github(other))).toEqual({ status: 202, body: { triggered: [] } });
    const refEvent = (ref: string, type: string) =>
      bytes(JSON.stringify({ ref, ref_type: type, repository: { clone_url: URL_OF_REPO } }));
    for (const [event, ref, type, expected] of [
      ['create', 'v3.1.0', 'tag', ['policies']],
      ['delete', 'v3.1.0', 'tag', ['policies']],
      ['create', 'release/2026-02', 'branch', ['policies']],
      ['create', 'release/2026-02', 'tag', []],
    ] as const) {
      const body = refEvent(ref, type);
      expect(await send(body, github(body, { 'x-github-event': event }))).toEqual({
        status: 202,
        body: { triggered: expected },
      });
    }
    const generic = (ref: string) => bytes(JSON.stringify({ source: 'policies', ref }));
    const bearer = { authorization: `Bearer ${SECRET}`, 'content-type': 'application/json' };
    expect(await send(generic('v3.0.0'), bearer)).toEqual({ status: 202, body: { triggered: ['policies'] } });
    expect(await send(generic('main'), bearer)).toEqual({ status: 202, body: { triggered: [] } });
    expect(triggered).toEqual(['policies', 'policies', 'policies', 'policies', 'policies']);
    const bad = bytes(
      JSON.stringify({ ref: 'v1', ref_type: 'note', repository: { clone_url: URL_OF_REPO } }),
    );
    expect((await send(bad, github(bad, { 'x-github-event': 'create' }))).status).toBe(400);
  });
});
