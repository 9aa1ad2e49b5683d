import type { SourceConfig } from '../config/index.ts';
import type { Logger } from '../shared/log.ts';
import type { ReasonOf } from '../shared/reasons.ts';
import { refMatcher } from '../shared/refNames.ts';
import type { DeliveryLog } from './deliveries.ts';
import { githubSignature, sameSecret } from './secrets.ts';
import {
  parseGenericEvent,
  parseGithubRefEvent,
  parseGithubPush,
  parseGitlabPush,
  payloadOf,
  type Parsed,
  type Push,
} from './webhookEvents.ts';

export const WEBHOOK_PATH = '/hooks/git';

/** How a delivery ended: the registry's `webhook-` codes (`webhook-too-large` is answered before the body is read). */
export type WebhookOutcome = ReasonOf<'webhook'>;

export interface WebhookOptions {
  secret: string;
  sources: readonly SourceConfig[];
  trigger: (id: string, why: string) => unknown;
  deliveries: DeliveryLog;
  logger: Logger;
  /** Told how each delivery ended (metrics). */
  onOutcome?: (outcome: WebhookOutcome) => void;
}

type Kind = 'github' | 'gitlab' | 'generic';

const json = (status: number, body: unknown) => Response.json(body, { status });

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

/** Whether `ref` (a full name, or a short one a generic event gives) is one a `refs:` source follows. */
function followsRef(source: SourceConfig, ref: string): boolean {
  if (source.target.kind !== 'refs') return false;
  const matches = refMatcher(source.target.patterns);
  return ref.startsWith('refs/') ? matches(ref) : matches(`refs/heads/${ref}`) || matches(`refs/tags/${ref}`);
}

/** Sources a push moves: remote sources of that repository tracking that ref, or following refs it matches. */
function matchPush(sources: readonly SourceConfig[], push: Push): SourceConfig[] {
  const keys = new Set(push.repositoryUrls.map(repositoryKey).filter((key) => key !== undefined));
  return sources.filter((source) => {
    if (source.location.kind !== 'remote') return false;
    if (!keys.has(repositoryKey(source.location.url) ?? '')) return false;
    if (source.target.kind === 'refs') return followsRef(source, push.ref);
    if (source.target.kind !== 'ref') return false;
    const tracked = source.target.ref;
    if (tracked === 'HEAD')
      return push.defaultBranch !== undefined && push.ref === `refs/heads/${push.defaultBranch}`;
    return (
      push.ref === tracked || push.ref === `refs/heads/${tracked}` || push.ref === `refs/tags/${tracked}`
    );
  });
}

function kindOf(headers: Headers): Kind {
  if (headers.has('x-github-event')) return 'github';
  if (headers.has('x-gitlab-event') || headers.has('x-gitlab-token')) return 'gitlab';
  return 'generic';
}

/** Whether the delivery carries the secret: an HMAC of the raw bytes (GitHub), or the secret itself. */
function authentic(kind: Kind, headers: Headers, body: Uint8Array, secret: string): boolean {
  if (kind === 'github')
    return sameSecret(headers.get('x-hub-signature-256') ?? '', githubSignature(secret, body));
  if (kind === 'gitlab') return sameSecret(headers.get('x-gitlab-token') ?? '', secret);
  return sameSecret(headers.get('authorization') ?? '', `Bearer ${secret}`);
}

const MISSING_SECRET: Record<Kind, string> = {
  github: 'bad or missing X-Hub-Signature-256',
  gitlab: 'bad or missing X-Gitlab-Token',
  generic: 'bad or missing bearer token',
};

// GitHub signs the body: before it is read, only the signature's form can be checked.
const SIGNATURE = /^sha256=[0-9a-f]{64}$/i;

/** The answer to a delivery without its secret: logged, counted, 401. */
function unauthorized(kind: Kind, options: Pick<WebhookOptions, 'logger' | 'onOutcome'>): Response {
  options.logger.warn({ kind }, `webhook refused: ${MISSING_SECRET[kind]}`);
  options.onOutcome?.('webhook-unauthorized');
  return json(401, { error: MISSING_SECRET[kind] });
}

/**
 * A delivery refused from its headers, before its body is read: a GitLab or generic one whose secret is wrong (the
 * headers carry it), a GitHub one without a signature.
 */
export function refuseUnsigned(
  headers: Headers,
  options: Pick<WebhookOptions, 'secret' | 'logger' | 'onOutcome'>,
): Response | undefined {
  const kind = kindOf(headers);
  const plausible =
    kind === 'github'
      ? SIGNATURE.test(headers.get('x-hub-signature-256') ?? '')
      : authentic(kind, headers, new Uint8Array(), options.secret);
  return plausible ? undefined : unauthorized(kind, options);
}

/** The id a sender gives each delivery (repeated when it redelivers), if it gives one. */
function deliveryOf(kind: Kind, headers: Headers): string | undefined {
  const id =
    kind === 'github'
      ? headers.get('x-github-delivery')
      : kind === 'gitlab'
        ? (headers.get('x-gitlab-event-uuid') ?? headers.get('idempotency-key'))
        : headers.get('idempotency-key');
  return id === null || id === '' ? undefined : `${kind}:${id}`;
}

/** The sources a delivery moves, or why its payload is refused. */
function matched(
  kind: Kind,
  event: string | null,
  payload: unknown,
  sources: readonly SourceConfig[],
): Parsed<SourceConfig[]> {
  if (kind === 'generic') {
    const parsed = parseGenericEvent(payload);
    if (!parsed.ok) return parsed;
    const { source: id, ref } = parsed.value;
    const found = sources.filter(
      (source) =>
        source.id === id &&
        (ref === undefined ||
          (source.target.kind === 'ref' && source.target.ref === ref) ||
          followsRef(source, ref)),
    );
    return { ok: true, value: found };
  }
  const push =
    kind === 'gitlab'
      ? parseGitlabPush(payload)
      : event === 'push'
        ? parseGithubPush(payload)
        : parseGithubRefEvent(payload);
  return push.ok ? { ok: true, value: matchPush(sources, push.value) } : push;
}

/** GitHub events that move refs: a push, and a branch or tag created or deleted (a `refs:` source lists it). */
const GITHUB_EVENTS = new Set(['push', 'create', 'delete']);

/**
 * POST /hooks/git with the body's raw bytes: a GitHub push (X-Hub-Signature-256, HMAC-SHA256 of the bytes; JSON
 * or form-encoded), a GitLab push (X-Gitlab-Token) or a generic `{"source": "...", "ref": "..."}` with
 * `Authorization: Bearer <secret>`. A valid event syncs the matching sources at once (202); a bad or missing
 * signature is 401 and syncs nothing; a delivery seen before is acknowledged (200) and syncs nothing.
 */
export async function handleWebhook(request: Request, options: WebhookOptions): Promise<Response> {
  const answer = (outcome: WebhookOutcome, status: number, body: unknown) => {
    options.onOutcome?.(outcome);
    return json(status, body);
  };
  const body = new Uint8Array(await request.arrayBuffer());
  const headers = request.headers;
  const kind = kindOf(headers);
  if (!authentic(kind, headers, body, options.secret)) return unauthorized(kind, options);
  const event = kind === 'github' ? headers.get('x-github-event') : null;
  if (event === 'ping') return answer('webhook-ping', 200, { ok: true, triggered: [] });
  if (kind === 'github' && !GITHUB_EVENTS.has(event ?? ''))
    return answer('webhook-ignored', 202, { ignored: `event ${event}`, triggered: [] });
  const payload = payloadOf(body, headers.get('content-type'));
  const found = payload.ok ? matched(kind, event, payload.value, options.sources) : payload;
  if (!found.ok) return answer('webhook-invalid', 400, { error: found.problem });
  const delivery = deliveryOf(kind, headers);
  if (delivery !== undefined && options.deliveries.seen(delivery)) {
    options.logger.info({ kind, delivery }, 'webhook delivery seen before; not syncing again');
    return answer('webhook-replayed', 200, { replayed: true, triggered: [] });
  }
  const triggered = found.value.map((source) => source.id);
  for (const id of triggered) void options.trigger(id, `webhook (${kind})`);
  options.logger.info({ kind, triggered }, 'webhook');
  return answer('webhook-triggered', 202, { triggered });
}
