import { z } from 'zod';
import { COMMIT_PATTERN as COMMIT, SOURCE_ID_PATTERN as SOURCE_ID } from '../shared/patterns.ts';
import { DURATION, DURATION_ADVICE, parseDuration } from './duration.ts';
import { GITHUB_NAME, GITLAB_NAME, webFolderAdvice } from './shorthand.ts';
import {
  DEFAULT_CACHE_TTL,
  DEFAULT_DEADLINE_MS,
  DEFAULT_GIT_MEMORY_BYTES,
  DEFAULT_HTTP_TIMEOUT_MS,
  DEFAULT_MAX_FETCH_BYTES,
  DEFAULT_MAX_FETCH_OBJECTS,
  DEFAULT_MAX_PROMPTS,
  DEFAULT_PAGE_SIZE,
  isSecureUrl,
  MAX_REFS_LIMIT,
  remoteKind,
  repositoryPathProblem,
} from './rules.ts';

const ENV_REFERENCE = /^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$/;

/** A duration as written (`30s`, `5m`), checked and read as milliseconds; its default is in milliseconds. */
const duration = (min: number, what: string) =>
  z
    .string({ error: `must be ${DURATION_ADVICE}` })
    .regex(DURATION, `must be ${DURATION_ADVICE}`)
    .refine(
      (text) => !DURATION.test(text) || parseDuration(text) >= min,
      `${what} must be at least ${min >= 1000 ? `${min / 1000}s` : `${min}ms`}`,
    )
    .transform(parseDuration);

/** `user@host:path`: git's scp-like SSH syntax (no `://`, a colon before any slash; no host starting with `-`). */

/** A folder or file path inside the repository, as a grant names it: relative, plain segments. */
const repositoryPath = (what: string) =>
  z
    .string()
    .min(1)
    .transform((value) => value.replace(/^\.\/|\/+$/g, ''))
    .refine(
      (value) =>
        value === '.' ||
        (!value.startsWith('/') &&
          !value.includes('\\') &&
          value.split('/').every((segment) => segment !== '' && segment !== '.' && segment !== '..')),
      `must be ${what} inside the repository (relative, "/"-separated, no "." or "..")`,
    );

/** One owner's grant: a script of the skill at a folder path, and the variables it may have. */
const grant = z.strictObject({
  skill: repositoryPath('the skill folder'),
  script: repositoryPath('the script path below the skill folder').refine(
    (value) => value !== '.',
    'must name a file',
  ),
  env: z
    .array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name'))
    .optional(),
});

/**
 * A `refs:` pattern: a short name (`v*`, `release/*`) or a full one (`refs/tags/v*`); `*` is the only wildcard,
 * and the rest is what git allows in a ref name.
 */
const REF_PATTERN = /^(?!.*\.\.)(?!\/)(?!.*\/$)[^\s~^:?[\\]+$/;

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
    refs: z
      .array(
        z
          .string()
          .regex(
            REF_PATTERN,
            'must be a branch or tag name pattern ("v*", "release/*") or a full one ("refs/tags/v*"): no spaces, "..", "~", "^", ":", "?", "[" or "\\"',
          ),
      )
      .min(1, 'give at least one pattern')
      .optional(),
    list: z
      .union(
        [
          z.literal('all'),
          z.literal('newest'),
          z.strictObject({ newest: z.number().int().min(1).max(1000) }),
        ],
        {
          error: 'must be all, newest, or { newest: N }',
        },
      )
      .optional(),
    maxRefs: z.number().int().min(1).max(MAX_REFS_LIMIT).optional(),
    paths: z
      .array(
        z
          .string()
          .min(1)
          .refine(
            (value) => value === '' || repositoryPathProblem(value) === undefined,
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
    cacheScope: z.enum(['public', 'private']).optional(),
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
    run: z
      .union([z.literal('all-declared'), z.array(grant)], {
        error: 'must be a list of {skill, script, env} grants, or all-declared',
      })
      .optional(),
  })
  .superRefine((value, ctx) => {
    const advice = value.url === undefined ? undefined : webFolderAdvice(value.url);
    if (advice !== undefined) ctx.addIssue({ code: 'custom', message: advice, path: ['url'] });
    const locations = [value.url, value.path, value.github, value.gitlab].filter((v) => v !== undefined);
    if (locations.length !== 1)
      ctx.addIssue({ code: 'custom', message: 'give exactly one of github, gitlab, url or path', path: [] });
    if ([value.commit, value.ref, value.refs].filter((v) => v !== undefined).length !== 1)
      ctx.addIssue({ code: 'custom', message: 'give exactly one of commit, ref or refs', path: [] });
    for (const key of ['list', 'maxRefs'] as const)
      if (value[key] !== undefined && value.refs === undefined)
        ctx.addIssue({
          code: 'custom',
          message: `${key} only applies to a source that follows refs: [patterns]`,
          path: [key],
        });
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
    if (value.verify?.require === 'tag' && value.ref === undefined && value.refs === undefined)
      ctx.addIssue({
        code: 'custom',
        message:
          'require: tag verifies the annotated tag that ref names; give ref: <tag> or refs: [patterns]',
        path: ['verify', 'require'],
      });
    if (value.poll !== undefined && value.commit !== undefined)
      ctx.addIssue({
        code: 'custom',
        message: 'poll only applies to a source that tracks a ref (a pinned commit never moves)',
        path: ['poll'],
      });
  });

const envReference = (example: string) =>
  z
    .string()
    .regex(
      ENV_REFERENCE,
      `must be an environment reference like \${${example}}; secrets are never written in the config`,
    );

const secureUrl = z
  .string()
  .refine((value) => URL.canParse(value), 'is not a valid URL')
  .refine(
    (value) => !URL.canParse(value) || isSecureUrl(value),
    'must be an https:// URL (http:// only for a loopback host)',
  )
  .refine(
    (value) => !URL.canParse(value) || (new URL(value).hash === '' && new URL(value).username === ''),
    'must carry no fragment and no credentials',
  );

/** A principal's sources: configured ids. */
const sourceIds = z.array(z.string().regex(SOURCE_ID, 'must be a source id')).min(1);

const auth = z
  .strictObject({
    tokens: z
      .array(
        z.strictObject({
          name: z
            .string()
            .regex(
              /^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/,
              'must be 1-64 letters, digits, ".", "_", "@" or "-" (logs name the principal by it)',
            ),
          token: envReference('SKILLPIN_CI_TOKEN'),
          sources: sourceIds.optional(),
        }),
      )
      .min(1)
      .optional(),
    oauth: z
      .strictObject({
        issuer: secureUrl,
        audience: z
          .string()
          .refine(
            (value) => URL.canParse(value) && /^https?:$/.test(new URL(value).protocol),
            'must be the URL clients reach this server at, e.g. https://skills.example.com/mcp (RFC 8707)',
          ),
        jwksUrl: secureUrl.optional(),
        scopes: z
          .record(
            z.string().regex(/^[\x21\x23-\x5b\x5d-\x7e]+$/, 'must be an OAuth scope token (RFC 6749 §3.3)'),
            z.union([z.literal('*'), sourceIds]),
          )
          .refine(
            (value) => Object.keys(value).length > 0,
            'map at least one scope to sources ("*" for every source)',
          ),
      })
      .optional(),
  })
  .refine((value) => value.tokens !== undefined || value.oauth !== undefined, 'give tokens, oauth or both');

export const configSchema = z.strictObject({
  dataDir: z.string().min(1).default('.skillpin'),
  lock: z.string().min(1).optional(),
  pageSize: z.number().int().positive().max(10_000).default(DEFAULT_PAGE_SIZE),
  strictNames: z.boolean().default(false),
  tools: z.boolean().default(true),
  prompts: z.boolean().default(true),
  maxPrompts: z.number().int().min(0).max(10_000).default(DEFAULT_MAX_PROMPTS),
  cache: z
    .strictObject({
      listTtlMs: z
        .number()
        .int()
        .nonnegative()
        .max(Number.MAX_SAFE_INTEGER)
        .default(DEFAULT_CACHE_TTL.listTtlMs),
      pinnedTtlMs: z
        .number()
        .int()
        .nonnegative()
        .max(Number.MAX_SAFE_INTEGER)
        .default(DEFAULT_CACHE_TTL.pinnedTtlMs),
    })
    .prefault({}),
  sync: z
    .strictObject({
      concurrency: z.number().int().min(1).max(64).default(4),
      timeout: duration(100, 'timeout').default(DEFAULT_HTTP_TIMEOUT_MS),
      deadline: duration(1000, 'deadline').default(DEFAULT_DEADLINE_MS),
      maxFetchBytes: z
        .number()
        .int()
        .min(1024 * 1024)
        .max(Number.MAX_SAFE_INTEGER)
        .default(DEFAULT_MAX_FETCH_BYTES),
      maxFetchObjects: z.number().int().min(1000).max(0xffffffff).default(DEFAULT_MAX_FETCH_OBJECTS),
      redirects: z.enum(['follow', 'refuse']).default('follow'),
      poll: duration(1000, 'poll').default(5 * 60_000),
      keep: z.number().int().min(0).max(100).default(2),
      retryMin: duration(10, 'retryMin').default(5_000),
      retryMax: duration(10, 'retryMax').default(10 * 60_000),
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
      maxMemory: z
        .number()
        .int()
        .min(64 * 1024 * 1024)
        .max(Number.MAX_SAFE_INTEGER)
        .default(DEFAULT_GIT_MEMORY_BYTES),
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
      metrics: z.boolean().default(false),
    })
    .prefault({}),
  runs: z
    .strictObject({
      confirm: z.enum(['ask-user', 'auto', 'refuse']).default('ask-user'),
      elicitation: z.boolean().default(true),
      tokenTtl: duration(1000, 'tokenTtl').default(10 * 60_000),
      secret: z
        .string()
        .regex(
          ENV_REFERENCE,
          'must be an environment reference like ${SKILLPIN_RUN_SECRET}; secrets are never written in the config',
        )
        .optional(),
      interpreters: z
        .array(z.enum(['node', 'python3']))
        .min(1)
        .default(['node']),
      allowUnscrubbed: z.boolean().default(false),
      /** The user scripts run as: a name in /etc/passwd or a numeric uid; as root, `nobody` when absent. */
      user: z
        .union([
          z
            .string()
            .regex(/^[a-z_][a-z0-9_.-]{0,31}\$?$|^[0-9]{1,10}$/i, 'must be a user name or a numeric uid'),
          z.number().int().min(0).max(4294967294),
        ])
        .optional(),
    })
    .prefault({}),
  coordination: z
    .strictObject({
      // The URL may carry a password: only an environment reference is accepted.
      redis: envReference('REDIS_URL'),
      // What the replicas sign their publications with; required (resolve.ts says so at its key).
      secret: envReference('SKILLPIN_COORDINATION_SECRET').optional(),
      tls: z.union([z.boolean(), z.strictObject({ ca: z.string().min(1) })]).optional(),
      keyPrefix: z
        .string()
        .regex(/^[A-Za-z0-9._:-]{1,64}$/, 'must be 1-64 letters, digits, ".", "_", ":" or "-"')
        .default('skillpin:'),
      connectTimeout: duration(100, 'connectTimeout').default(5_000),
      commandTimeout: duration(50, 'commandTimeout').default(2_000),
      lease: duration(1000, 'lease').default(30_000),
    })
    .optional(),
  auth: auth.optional(),
  sources: z.array(source).min(1, 'configure at least one source'),
});

export type RawConfig = z.infer<typeof configSchema>;
export { ENV_REFERENCE };
