import { createHmac, timingSafeEqual } from 'node:crypto';
import type { SourceConfig } from '../config/index.ts';
import type { Logger } from '../shared/log.ts';

export const WEBHOOK_PATH = '/hooks/git';

export interface WebhookOptions {
  secret: string;
  maxBodyBytes: number;
  sources: readonly SourceConfig[];
  trigger: (id: string, why: string) => unknown;
  logger: Logger;
}

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

function sameSecret(given: string, secret: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(secret);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** A repository URL reduced to what identifies it: host and path, lowercase, no credentials, no `.git`. */
export function repositoryKey(url: string): string | undefined {
  try {
    const parsed = new URL(url);
    return `${parsed.host}${parsed.pathname}`
      .toLowerCase()
      .replace(/\/+$/, '')
      .replace(/\.git$/, '');
  } catch {
    return undefined;
  }
}

/** Reads at most `max` bytes of the body; `undefined` when it is larger. */
async function readBody(request: Request, max: number): Promise<Buffer | undefined> {
  const declared = Number(request.headers.get('content-length') ?? '0');
  if (declared > max) return undefined;
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of request.body ?? []) {
    size += chunk.byteLength;
    if (size > max) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** Sources a push to `repositoryUrls` on `ref` moves: remote sources of that repository tracking that ref. */
function matchPush(
  sources: readonly SourceConfig[],
  repositoryUrls: unknown[],
  ref: string,
  defaultBranch: string | undefined,
): SourceConfig[] {
  const keys = new Set(
    repositoryUrls
      .flatMap((url) => (typeof url === 'string' ? [repositoryKey(url)] : []))
      .filter((key) => key !== undefined),
  );
  return sources.filter((source) => {
    if (source.location.kind !== 'remote' || source.target.kind !== 'ref') return false;
    if (!keys.has(repositoryKey(source.location.url) ?? '')) return false;
    const tracked = source.target.ref;
    if (tracked === 'HEAD') return defaultBranch !== undefined && ref === `refs/heads/${defaultBranch}`;
    return ref === tracked || ref === `refs/heads/${tracked}` || ref === `refs/tags/${tracked}`;
  });
}

/**
 * POST /hooks/git: a GitHub push (X-Hub-Signature-256, HMAC-SHA256 of the body), a GitLab push (X-Gitlab-Token)
 * or a generic `{"source": "...", "ref": "..."}` with `Authorization: Bearer <secret>`. A valid event syncs the
 * matching sources at once (202); a bad or missing signature is 401 and syncs nothing.
 */
export async function handleWebhook(request: Request, options: WebhookOptions): Promise<Response> {
  if (request.method !== 'POST') return json(405, { error: 'POST only' });
  const body = await readBody(request, options.maxBodyBytes);
  if (body === undefined) return json(413, { error: `body larger than ${options.maxBodyBytes} bytes` });
  const headers = request.headers;
  let kind: 'github' | 'gitlab' | 'generic';
  if (headers.has('x-github-event')) {
    kind = 'github';
    const expected = `sha256=${createHmac('sha256', options.secret).update(body).digest('hex')}`;
    if (!sameSecret(headers.get('x-hub-signature-256') ?? '', expected))
      return json(401, { error: 'bad or missing X-Hub-Signature-256' });
  } else if (headers.has('x-gitlab-event') || headers.has('x-gitlab-token')) {
    kind = 'gitlab';
    if (!sameSecret(headers.get('x-gitlab-token') ?? '', options.secret))
      return json(401, { error: 'bad or missing X-Gitlab-Token' });
  } else {
    kind = 'generic';
    if (!sameSecret(headers.get('authorization') ?? '', `Bearer ${options.secret}`))
      return json(401, { error: 'bad or missing bearer token' });
  }
  let payload: Record<string, unknown>;
  try {
    payload = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
    if (typeof payload !== 'object' || payload === null) throw new Error('not an object');
  } catch {
    return json(400, { error: 'the body is not a JSON object' });
  }
  let matched: SourceConfig[];
  if (kind === 'github') {
    const event = headers.get('x-github-event');
    if (event === 'ping') return json(200, { ok: true, triggered: [] });
    if (event !== 'push') return json(202, { ignored: `event ${event}`, triggered: [] });
    const repository = (payload['repository'] ?? {}) as Record<string, unknown>;
    matched = matchPush(
      options.sources,
      [repository['clone_url'], repository['html_url'], repository['url']],
      String(payload['ref'] ?? ''),
      repository['default_branch'] as string | undefined,
    );
  } else if (kind === 'gitlab') {
    const project = (payload['project'] ?? {}) as Record<string, unknown>;
    const repository = (payload['repository'] ?? {}) as Record<string, unknown>;
    matched = matchPush(
      options.sources,
      [project['git_http_url'], project['web_url'], repository['git_http_url'], repository['homepage']],
      String(payload['ref'] ?? ''),
      project['default_branch'] as string | undefined,
    );
  } else {
    const id = payload['source'];
    const ref = payload['ref'];
    if (typeof id !== 'string') return json(400, { error: 'the body needs "source": "<source id>"' });
    matched = options.sources.filter(
      (source) =>
        source.id === id &&
        (ref === undefined || (source.target.kind === 'ref' && source.target.ref === ref)),
    );
  }
  for (const source of matched) void options.trigger(source.id, `webhook (${kind})`);
  options.logger.info({ kind, triggered: matched.map((s) => s.id) }, 'webhook');
  return json(202, { triggered: matched.map((s) => s.id) });
}
