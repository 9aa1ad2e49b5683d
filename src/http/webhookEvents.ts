import { z } from 'zod';

/** A push as skillpin needs it: which repository (any of its URLs), which ref, and its default branch. */
export interface Push {
  repositoryUrls: string[];
  ref: string;
  defaultBranch?: string;
}

const url = z.string().nullish();

const githubPush = z.object({
  ref: z.string(),
  repository: z.object({ clone_url: url, html_url: url, url, default_branch: z.string().nullish() }),
});

/** GitHub's `create` and `delete` events: a short ref name and whether it is a branch or a tag. */
const githubRefEvent = z.object({
  ref: z.string(),
  ref_type: z.enum(['branch', 'tag']),
  repository: githubPush.shape.repository,
});

const gitlabPush = z.object({
  ref: z.string(),
  project: z.object({ git_http_url: url, web_url: url, default_branch: z.string().nullish() }).optional(),
  repository: z.object({ git_http_url: url, homepage: url }).optional(),
});

const genericEvent = z.object({ source: z.string(), ref: z.string().optional() });

export type GenericEvent = z.infer<typeof genericEvent>;

export type Parsed<T> = { ok: true; value: T } | { ok: false; problem: string };

const present = (values: Array<string | null | undefined>) =>
  values.filter((value): value is string => typeof value === 'string');

function parsed<T>(result: z.ZodSafeParseResult<T>, what: string): Parsed<T> {
  if (result.success) return { ok: true, value: result.data };
  const issue = result.error.issues[0]!;
  return { ok: false, problem: `not ${what}: ${issue.path.join('.') || '(body)'}: ${issue.message}` };
}

function asPush<T>(result: Parsed<T>, push: (value: T) => Push): Parsed<Push> {
  return result.ok ? { ok: true, value: push(result.value) } : result;
}

export function parseGithubPush(payload: unknown): Parsed<Push> {
  return asPush(parsed(githubPush.safeParse(payload), 'a GitHub push event'), ({ ref, repository }) => ({
    repositoryUrls: present([repository.clone_url, repository.html_url, repository.url]),
    ref,
    defaultBranch: repository.default_branch ?? undefined,
  }));
}

/** A branch or tag created or deleted, as the push of its full ref name. */
export function parseGithubRefEvent(payload: unknown): Parsed<Push> {
  return asPush(
    parsed(githubRefEvent.safeParse(payload), 'a GitHub create or delete event'),
    ({ ref, ref_type, repository }) => ({
      repositoryUrls: present([repository.clone_url, repository.html_url, repository.url]),
      ref: `refs/${ref_type === 'tag' ? 'tags' : 'heads'}/${ref}`,
      defaultBranch: repository.default_branch ?? undefined,
    }),
  );
}

export function parseGitlabPush(payload: unknown): Parsed<Push> {
  return asPush(
    parsed(gitlabPush.safeParse(payload), 'a GitLab push event'),
    ({ ref, project, repository }) => ({
      repositoryUrls: present([
        project?.git_http_url,
        project?.web_url,
        repository?.git_http_url,
        repository?.homepage,
      ]),
      ref,
      defaultBranch: project?.default_branch ?? undefined,
    }),
  );
}

export function parseGenericEvent(payload: unknown): Parsed<GenericEvent> {
  return parsed(genericEvent.safeParse(payload), 'a {"source": "<source id>", "ref"?: "<ref>"} event');
}

/**
 * The JSON object a delivery carries: the body itself, or its `payload` field when GitHub sends the form
 * encoding. A leading BOM is allowed (RFC 8259 §8.1); bytes that are not UTF-8 become U+FFFD.
 */
export function payloadOf(body: Uint8Array, contentType: string | null): Parsed<unknown> {
  let text = new TextDecoder().decode(body);
  if ((contentType ?? '').split(';')[0]!.trim().toLowerCase() === 'application/x-www-form-urlencoded') {
    const field = new URLSearchParams(text).get('payload');
    if (field === null) return { ok: false, problem: 'a form-encoded delivery needs a "payload" field' };
    text = field;
  }
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return { ok: true, value };
  } catch {
    // Reported below, as for any body that is not an object.
  }
  return { ok: false, problem: 'the payload is not a JSON object' };
}
