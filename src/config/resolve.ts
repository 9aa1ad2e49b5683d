import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ConfigError } from './error.ts';
import { type ConfigYaml, keyPath, positionOf, problemAt } from './messages.ts';
import {
  DEFAULT_MAX_REFS,
  defaultGitSettings,
  MIN_TOKEN_LENGTH,
  normalizePaths,
  remoteKind,
} from './rules.ts';
import { configSchema, ENV_REFERENCE, type RawConfig } from './schema.ts';
import { shorthandUrl } from './shorthand.ts';
import type {
  AuthConfig,
  Config,
  CoordinationConfig,
  GitSettings,
  KeyFile,
  RunGrants,
  RunSettings,
  SourceConfig,
  TokenPrincipal,
  VerifyConfig,
} from './types.ts';

type RawSource = RawConfig['sources'][number];
type Segments = PropertyKey[];

/**
 * What every resolving step shares. Every problem is collected, not thrown: the user fixes them all in one go.
 */
interface Resolving {
  /** The config file's folder: relative paths resolve against it. */
  base: string;
  problem(at: Segments, message: string): void;
  /** The value of `${NAME}`; unset or empty is a problem. */
  fromEnv(reference: string, at: Segments): string;
  /** A file named relative to the config, read; one that cannot be read is a problem. */
  keyFile(name: string, at: Segments): KeyFile;
}

/**
 * Step 3: the checked config with paths made absolute, environment references read, shorthands expanded and
 * what a source inherits from the top level filled in. Throws `ConfigError` naming every problem.
 */
export function resolveConfig(raw: RawConfig, yaml: ConfigYaml, env: NodeJS.ProcessEnv): Config {
  const file = path.resolve(yaml.file);
  const problems: string[] = [];
  const resolving = resolvingIn(yaml, path.dirname(file), env, problems);
  const git = resolveGit(raw.git, env, resolving);
  const sync = resolveSync(raw.sync);
  const sources = resolveSources(raw, sync, git, resolving);
  const webhook =
    raw.webhook === undefined
      ? undefined
      : {
          secret: resolving.fromEnv(raw.webhook.secret, ['webhook', 'secret']),
          maxBodyBytes: raw.webhook.maxBodyBytes,
        };
  const runs = resolveRuns(raw.runs, (reference) => resolving.fromEnv(reference, ['runs', 'secret']));
  const auth = raw.auth === undefined ? undefined : resolveAuth(raw.auth, sources, resolving);
  const coordination =
    raw.coordination === undefined ? undefined : resolveCoordination(raw.coordination, resolving);
  if (problems.length > 0) throw new ConfigError(problems);
  return {
    file,
    dataDir: path.resolve(resolving.base, raw.dataDir),
    dataDirFrom: dataDirFrom(yaml),
    lock: raw.lock === undefined ? undefined : path.resolve(resolving.base, raw.lock),
    pageSize: raw.pageSize,
    tools: raw.tools,
    prompts: raw.prompts,
    maxPrompts: raw.maxPrompts,
    cache: raw.cache,
    http: raw.http,
    sync,
    git,
    webhook,
    runs,
    // The one key left out rather than undefined: a config without `auth:` has no `auth` (its test probes `in`).
    ...(auth === undefined ? {} : { auth }),
    coordination,
    sources,
  };
}

/** Where `dataDir` was set: its line in the config, or the default beside it. */
function dataDirFrom(yaml: ConfigYaml): string {
  const at = yaml.doc.has('dataDir') ? positionOf(yaml, ['dataDir']) : undefined;
  return at === undefined ? `the default .skillpin beside ${yaml.file}` : `${yaml.file}:${at.line}`;
}

/** The shared part of resolving `yaml`: its problems go to `problems`, each at its key's line. */
function resolvingIn(yaml: ConfigYaml, base: string, env: NodeJS.ProcessEnv, problems: string[]): Resolving {
  const problem = (at: Segments, message: string) => problems.push(problemAt(yaml, at, message));
  return {
    base,
    problem,
    fromEnv(reference, at) {
      const name = ENV_REFERENCE.exec(reference)![1]!;
      const value = env[name];
      if (value === undefined || value === '') problem(at, `environment variable ${name} is not set`);
      return value ?? '';
    },
    keyFile(name, at) {
      const label = `${yaml.file}: ${keyPath(at)} (${name})`;
      try {
        return { label, text: readFileSync(path.resolve(base, name), 'utf8') };
      } catch (error) {
        problem(at, `${name} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
        return { label, text: '' };
      }
    },
  };
}

/** `git:` with its backend chosen (`SKILLPIN_GIT_BACKEND` when the config does not say) and its proxy read. */
function resolveGit(raw: RawConfig['git'], env: NodeJS.ProcessEnv, resolving: Resolving): GitSettings {
  const backend = raw.backend ?? defaultGitSettings(env).backend;
  const proxy =
    raw.proxy !== undefined && ENV_REFERENCE.test(raw.proxy)
      ? resolving.fromEnv(raw.proxy, ['git', 'proxy'])
      : raw.proxy;
  return { backend, maxMemoryBytes: raw.maxMemory, proxy };
}

/** `sync:` under the names the program reads (the schema read its durations in ms): each source's limits come from here. */
function resolveSync(raw: RawConfig['sync']): Config['sync'] {
  return {
    concurrency: raw.concurrency,
    timeoutMs: raw.timeout,
    deadlineMs: raw.deadline,
    maxFetchBytes: raw.maxFetchBytes,
    maxFetchObjects: raw.maxFetchObjects,
    redirects: raw.redirects,
    retryMinMs: raw.retryMin,
    retryMaxMs: raw.retryMax,
  };
}

/** Every source resolved, each id used once. */
function resolveSources(
  raw: RawConfig,
  sync: Config['sync'],
  git: GitSettings,
  resolving: Resolving,
): SourceConfig[] {
  const seen = new Set<string>();
  return raw.sources.map((source, index) => {
    if (seen.has(source.id))
      resolving.problem(['sources', index, 'id'], `"${source.id}" is used by another source`);
    seen.add(source.id);
    return resolveSource(source, ['sources', index], { raw, sync, git }, resolving);
  });
}

/**
 * One source: its location (a shorthand expanded, a path made absolute, its token read), its target, its key
 * files and grants, and what it does not say taken from the top level.
 */
function resolveSource(
  source: RawSource,
  at: Segments,
  top: { raw: RawConfig; sync: Config['sync']; git: GitSettings },
  resolving: Resolving,
): SourceConfig {
  const token = source.token === undefined ? undefined : resolving.fromEnv(source.token, [...at, 'token']);
  const url =
    source.github !== undefined
      ? shorthandUrl('github', source.github)
      : source.gitlab !== undefined
        ? shorthandUrl('gitlab', source.gitlab)
        : source.url;
  const { sync } = top;
  return {
    id: source.id,
    location:
      url === undefined
        ? { kind: 'local', path: path.resolve(resolving.base, source.path!), given: source.path! }
        : { kind: 'remote', url, token, credentialHelper: source.credentialHelper },
    target: targetOf(source),
    paths: normalizePaths(source.paths ?? []),
    strictNames: source.strictNames ?? top.raw.strictNames,
    pollMs: source.commit === undefined ? (source.poll ?? top.raw.sync.poll) : undefined,
    keep: source.keep ?? top.raw.sync.keep,
    timeoutMs: sync.timeoutMs,
    deadlineMs: sync.deadlineMs,
    maxFetchBytes: sync.maxFetchBytes,
    maxFetchObjects: sync.maxFetchObjects,
    redirects: sync.redirects,
    git: top.git,
    verify:
      source.verify === undefined ? undefined : resolveVerify(source.verify, [...at, 'verify'], resolving),
    run: source.run === undefined ? undefined : grantsOf(source.run),
    cacheScope: cacheScopeOf(source, url, top.raw.auth !== undefined, [...at, 'cacheScope'], resolving),
  };
}

/**
 * What anyone may fetch, any cache may share; what needs credentials stays per caller. Once the server
 * authenticates its callers, each gets answers of its own: every source is private then, and `public` is refused.
 */
function cacheScopeOf(
  source: RawSource,
  url: string | undefined,
  authenticates: boolean,
  at: Segments,
  resolving: Resolving,
): 'public' | 'private' {
  if (authenticates) {
    if (source.cacheScope === 'public')
      resolving.problem(
        at,
        'cannot be public while auth: is configured: each caller gets answers of its own, which a shared cache must not hand to another',
      );
    return 'private';
  }
  const credentials =
    source.token !== undefined ||
    source.credentialHelper !== undefined ||
    (url !== undefined && ['ssh', 'scp'].includes(remoteKind(url) ?? ''));
  return source.cacheScope ?? (credentials ? 'private' : 'public');
}

/** What a source serves: a pinned commit, one ref, or the refs matching its patterns. */
function targetOf(source: RawSource): SourceConfig['target'] {
  if (source.commit !== undefined) return { kind: 'commit', commit: source.commit };
  if (source.refs === undefined) return { kind: 'ref', ref: source.ref! };
  const list = source.list ?? 'all';
  return {
    kind: 'refs',
    patterns: source.refs,
    newest: list === 'all' ? undefined : list === 'newest' ? 1 : list.newest,
    maxRefs: source.maxRefs ?? DEFAULT_MAX_REFS,
  };
}

/** `verify:` with its key files read. */
function resolveVerify(
  raw: NonNullable<RawSource['verify']>,
  at: Segments,
  resolving: Resolving,
): VerifyConfig {
  return {
    require: raw.require,
    sshAllowedSigners:
      raw.sshAllowedSigners === undefined
        ? undefined
        : resolving.keyFile(raw.sshAllowedSigners, [...at, 'sshAllowedSigners']),
    gpgKeys: (raw.gpgKeys ?? []).map((name, i) => resolving.keyFile(name, [...at, 'gpgKeys', i])),
  };
}

/** `run:` grants; `skill: .` (the repository's root) as the indexer names it, ''. */
function grantsOf(run: NonNullable<RawSource['run']>): RunGrants {
  if (run === 'all-declared') return 'all-declared';
  return run.map((line) => ({
    skill: line.skill === '.' ? '' : line.skill,
    script: line.script,
    env: line.env ?? [],
  }));
}

function resolveRuns(raw: RawConfig['runs'], secret: (reference: string) => string): RunSettings {
  return {
    confirm: raw.confirm,
    elicitation: raw.elicitation,
    tokenTtlMs: raw.tokenTtl,
    secret: raw.secret === undefined ? undefined : secret(raw.secret),
    interpreters: raw.interpreters,
    allowUnscrubbed: raw.allowUnscrubbed,
    user: raw.user === undefined ? undefined : String(raw.user),
  };
}

/** `runs:` as a config without one has it. */
export function defaultRunSettings(): RunSettings {
  return resolveRuns(configSchema.shape.runs.parse(undefined), (reference) => reference);
}

/** `auth:` with its tokens read from the environment, every source it names checked against `sources`. */
function resolveAuth(
  raw: NonNullable<RawConfig['auth']>,
  sources: readonly SourceConfig[],
  resolving: Resolving,
): AuthConfig {
  const known = new Set(sources.map((source) => source.id));
  const checkSources = (ids: readonly string[], at: Segments) => {
    for (const [index, id] of ids.entries())
      if (!known.has(id)) resolving.problem([...at, index], `no source "${id}" is configured`);
  };
  const tokens = resolveTokens(raw.tokens ?? [], checkSources, resolving);
  const oauth = raw.oauth;
  if (oauth !== undefined)
    for (const [scope, seen] of Object.entries(oauth.scopes))
      if (seen !== '*') checkSources(seen, ['auth', 'oauth', 'scopes', scope]);
  return {
    tokens,
    oauth:
      oauth === undefined
        ? undefined
        : {
            issuer: oauth.issuer,
            audience: oauth.audience,
            jwksUrl: oauth.jwksUrl,
            scopes: Object.fromEntries(
              Object.entries(oauth.scopes).map(([scope, seen]) => [scope, seen === '*' ? '*' : [...seen]]),
            ),
          },
  };
}

/** `auth.tokens`: each read from the environment, long enough, and its name and secret used once. */
function resolveTokens(
  raw: NonNullable<NonNullable<RawConfig['auth']>['tokens']>,
  checkSources: (ids: readonly string[], at: Segments) => void,
  resolving: Resolving,
): TokenPrincipal[] {
  const names = new Map<string, number>();
  const secrets = new Map<string, number>();
  return raw.map((entry, index): TokenPrincipal => {
    const at = ['auth', 'tokens', index];
    const token = resolving.fromEnv(entry.token, [...at, 'token']);
    if (token !== '' && token.length < MIN_TOKEN_LENGTH)
      resolving.problem(
        [...at, 'token'],
        `the token is shorter than ${MIN_TOKEN_LENGTH} characters; use a random one (openssl rand -hex 32)`,
      );
    const sameName = names.get(entry.name);
    if (sameName !== undefined)
      resolving.problem([...at, 'name'], `"${entry.name}" is used by auth.tokens[${sameName}]`);
    const sameToken = secrets.get(token);
    if (token !== '' && sameToken !== undefined)
      resolving.problem([...at, 'token'], `holds the same token as auth.tokens[${sameToken}]`);
    names.set(entry.name, index);
    secrets.set(token, index);
    if (entry.sources !== undefined) checkSources(entry.sources, [...at, 'sources']);
    return { name: entry.name, token, sources: entry.sources === undefined ? undefined : [...entry.sources] };
  });
}

/**
 * The secret replicas sign their publications with: required, since a key prefix in a shared Redis gives no
 * authority; never repeated in a message.
 */
function coordinationSecret(reference: string | undefined, resolving: Resolving): string {
  if (reference === undefined) {
    resolving.problem(
      ['coordination', 'secret'],
      'is required with coordination.redis: an environment reference like ${SKILLPIN_COORDINATION_SECRET} holding a secret every replica shares (openssl rand -hex 32); what one replica publishes is signed with it, and anything unsigned is refused',
    );
    return '';
  }
  const secret = resolving.fromEnv(reference, ['coordination', 'secret']);
  if (secret !== '' && secret.length < MIN_TOKEN_LENGTH)
    resolving.problem(
      ['coordination', 'secret'],
      `the secret is shorter than ${MIN_TOKEN_LENGTH} characters; use a random one (openssl rand -hex 32)`,
    );
  return secret;
}

/**
 * `coordination:` with its Redis URL read from the environment. A URL that is not redis:// or rediss:// is a
 * problem whose message never repeats the value (it may hold a password).
 */
function resolveCoordination(
  raw: NonNullable<RawConfig['coordination']>,
  resolving: Resolving,
): CoordinationConfig {
  const url = resolving.fromEnv(raw.redis, ['coordination', 'redis']);
  const name = ENV_REFERENCE.exec(raw.redis)![1]!;
  let endpoint = '';
  let secure = false;
  if (url !== '') {
    const parsed = URL.canParse(url) ? new URL(url) : undefined;
    if (parsed === undefined || !['redis:', 'rediss:'].includes(parsed.protocol) || parsed.hostname === '')
      resolving.problem(
        ['coordination', 'redis'],
        `${name} must hold a redis:// or rediss:// URL with a host (redis://[:password@]host[:port][/db])`,
      );
    else {
      endpoint = `${parsed.hostname}:${parsed.port === '' ? '6379' : parsed.port}`;
      secure = parsed.protocol === 'rediss:';
    }
  }
  const tls =
    raw.tls === undefined || raw.tls === false
      ? secure
        ? {}
        : undefined
      : raw.tls === true
        ? {}
        : { ca: resolving.keyFile(raw.tls.ca, ['coordination', 'tls', 'ca']).text };
  return {
    redis: url,
    endpoint,
    secret: coordinationSecret(raw.secret, resolving),
    tls,
    keyPrefix: raw.keyPrefix,
    connectTimeoutMs: raw.connectTimeout,
    commandTimeoutMs: raw.commandTimeout,
    leaseMs: raw.lease,
  };
}
