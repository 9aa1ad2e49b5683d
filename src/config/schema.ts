import { z } from 'zod';
import { COMMIT_PATTERN as COMMIT, SOURCE_ID_PATTERN as SOURCE_ID } from '../shared/patterns.ts';
import { GITHUB_NAME, GITLAB_NAME, webFolderAdvice } from './shorthand.ts';

const ENV_REFERENCE = /^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$/;
const DURATION = /^(\d+)(ms|s|m|h)$/;
const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** "30s", "5m", "1h", "250ms" → milliseconds. */
export function parseDuration(text: string): number {
  const match = DURATION.exec(text);
  if (match === null) throw new Error(`not a duration: ${text}`);
  return Number(match[1]) * UNIT_MS[match[2]!]!;
}

const duration = (min: number, what: string) =>
  z
    .string()
    .regex(DURATION, 'must be a duration like 250ms, 30s, 5m or 1h')
    .refine(
      (text) => !DURATION.test(text) || parseDuration(text) >= min,
      `${what} must be at least ${min} ms`,
    );

/** `user@host:path`: git's scp-like SSH syntax (no `://`, a colon before any slash; no host starting with `-`). */
const SCP_LIKE =
  /^(?:[A-Za-z0-9._~][A-Za-z0-9._~-]*@)?(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9][A-Za-z0-9.-]*):(?!\/\/)[^\s]+$/;

/** What kind of remote a `url:` names, or `undefined` when it is none skillpin fetches from. */
export function remoteKind(url: string): 'http' | 'ssh' | 'scp' | 'file' | undefined {
  if (/^https?:\/\//i.test(url)) return 'http';
  if (/^ssh:\/\/[^-]/i.test(url)) return 'ssh';
  if (/^file:\/\//i.test(url)) return 'file';
  if (!url.includes('://') && SCP_LIKE.test(url)) return 'scp';
  return undefined;
}

const source = z
  .strictObject({
    id: z
      .string()
      .regex(
        SOURCE_ID,
        'must be lowercase letters, digits, "-" and "." (an RFC 3986 reg-name), at most 64 characters',
      ),
    url: z
      .string()
      .refine(
        (value) => remoteKind(value) !== undefined,
        'must be an https://, http://, ssh://, file:// or user@host:path URL',
      )
      .refine((value) => remoteKind(value) === 'scp' || URL.canParse(value), 'is not a valid URL')
      .refine(
        (value) =>
          !URL.canParse(value) ||
          (new URL(value).password === '' && (remoteKind(value) === 'ssh' || new URL(value).username === '')),
        'must not carry credentials; use token: ${ENV_NAME} or credentialHelper',
      )
      .optional(),
    path: z.string().min(1).optional(),
    github: z.string().regex(GITHUB_NAME, 'must be owner/repo, as in github.com/owner/repo').optional(),
    gitlab: z
      .string()
      .regex(GITLAB_NAME, 'must be group/project (or group/subgroup/project), as in gitlab.com/group/project')
      .optional(),
    commit: z.string().regex(COMMIT, 'must be a full 40-hex commit SHA (lowercase)').optional(),
    ref: z.string().min(1).optional(),
    paths: z
      .array(
        z
          .string()
          .min(1)
          .refine(
            (value) => !value.startsWith('/') && !value.split('/').includes('..'),
            'must be a folder inside the repository (relative, no "..")',
          ),
      )
      .optional(),
    token: z
      .string()
      .regex(
        ENV_REFERENCE,
        'must be an environment reference like ${MY_TOKEN}; secrets are never written in the config',
      )
      .optional(),
    credentialHelper: z.string().min(1).optional(),
    strictNames: z.boolean().optional(),
    poll: duration(1000, 'poll').optional(),
    keep: z.number().int().min(0).max(100).optional(),
    verify: z
      .strictObject({
        sshAllowedSigners: z.string().min(1).optional(),
        gpgKeys: z.array(z.string().min(1)).min(1).optional(),
        require: z.enum(['commit', 'tag']).default('commit'),
      })
      .refine(
        (value) => value.sshAllowedSigners !== undefined || value.gpgKeys !== undefined,
        'give sshAllowedSigners, gpgKeys or both: the keys a signature must verify against',
      )
      .optional(),
  })
  .superRefine((value, ctx) => {
    const advice = value.url === undefined ? undefined : webFolderAdvice(value.url);
    if (advice !== undefined) ctx.addIssue({ code: 'custom', message: advice, path: ['url'] });
    const locations = [value.url, value.path, value.github, value.gitlab].filter((v) => v !== undefined);
    if (locations.length !== 1)
      ctx.addIssue({ code: 'custom', message: 'give exactly one of github, gitlab, url or path', path: [] });
    if ((value.commit === undefined) === (value.ref === undefined))
      ctx.addIssue({ code: 'custom', message: 'give exactly one of commit or ref', path: [] });
    const kind =
      value.github !== undefined || value.gitlab !== undefined
        ? 'http'
        : value.url === undefined
          ? undefined
          : remoteKind(value.url);
    if (value.token !== undefined && kind !== 'http')
      ctx.addIssue({
        code: 'custom',
        message: 'token only applies to an http(s) url, github or gitlab source',
        path: ['token'],
      });
    if (value.credentialHelper !== undefined && kind !== 'http')
      ctx.addIssue({
        code: 'custom',
        message: 'credentialHelper only applies to an http(s) url, github or gitlab source',
        path: ['credentialHelper'],
      });
    if (value.credentialHelper !== undefined && value.token !== undefined)
      ctx.addIssue({ code: 'custom', message: 'give token or credentialHelper, not both', path: [] });
    if (value.verify?.require === 'tag' && value.ref === undefined)
      ctx.addIssue({
        code: 'custom',
        message: 'require: tag verifies the annotated tag that ref names; give ref: <tag>',
        path: ['verify', 'require'],
      });
    if (value.poll !== undefined && value.commit !== undefined)
      ctx.addIssue({
        code: 'custom',
        message: 'poll only applies to a source that tracks a ref (a pinned commit never moves)',
        path: ['poll'],
      });
  });

export const configSchema = z.strictObject({
  dataDir: z.string().min(1).default('.skillpin'),
  lock: z.string().min(1).optional(),
  pageSize: z.number().int().positive().max(10_000).default(100),
  strictNames: z.boolean().default(false),
  tools: z.boolean().default(true),
  prompts: z.boolean().default(true),
  cache: z
    .strictObject({
      ttlMs: z.number().int().nonnegative().default(60_000),
      scope: z.enum(['public', 'private']).default('private'),
    })
    .prefault({}),
  sync: z
    .strictObject({
      concurrency: z.number().int().min(1).max(64).default(4),
      timeout: duration(100, 'timeout').default('30s'),
      deadline: duration(1000, 'deadline').default('10m'),
      maxFetchBytes: z
        .number()
        .int()
        .min(1024 * 1024)
        .max(Number.MAX_SAFE_INTEGER)
        .default(1024 * 1024 * 1024),
      redirects: z.enum(['follow', 'refuse']).default('follow'),
      poll: duration(1000, 'poll').default('5m'),
      keep: z.number().int().min(0).max(100).default(2),
      retryMin: duration(10, 'retryMin').default('5s'),
      retryMax: duration(10, 'retryMax').default('10m'),
    })
    .prefault({}),
  webhook: z
    .strictObject({
      secret: z
        .string()
        .regex(
          ENV_REFERENCE,
          'must be an environment reference like ${WEBHOOK_SECRET}; secrets are never written in the config',
        ),
      maxBodyBytes: z
        .number()
        .int()
        .min(1024)
        .max(64 * 1024 * 1024)
        .default(1024 * 1024),
    })
    .optional(),
  git: z
    .strictObject({
      backend: z.enum(['auto', 'cli', 'isomorphic']).optional(),
      proxy: z
        .string()
        .refine(
          (value) =>
            ENV_REFERENCE.test(value) ||
            (URL.canParse(value) && new URL(value).username === '' && new URL(value).password === ''),
          'must be a proxy URL without credentials, or an environment reference like ${HTTPS_PROXY_URL}',
        )
        .optional(),
    })
    .prefault({}),
  http: z
    .strictObject({
      allowedHosts: z.array(z.string().min(1)).optional(),
      allowedOrigins: z.array(z.string().min(1)).optional(),
    })
    .prefault({}),
  sources: z.array(source).min(1, 'configure at least one source'),
});

export type RawConfig = z.infer<typeof configSchema>;
export { ENV_REFERENCE };
