import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseDocument } from 'yaml';
import { formatProblem, keyPath, LineCounter, plainWords, positionOf } from './messages.ts';
import { parseDuration } from './duration.ts';
import { ConfigError } from './error.ts';
import { configSchema, DEFAULT_MAX_REFS, ENV_REFERENCE, type RawConfig, remoteKind } from './schema.ts';
import { shorthandUrl } from './shorthand.ts';

/** What a lockfile says its commit serves: the root tree, and every skill by path with its totals and digest. */
export interface LockedIndex {
  tree: string;
  skills: ReadonlyArray<{ path: string; name: string; files: number; bytes: number; digest: string }>;
}

/** A source as the rest of the program sees it: paths absolute, secrets resolved (and never printed). */
export interface SourceConfig {
  id: string;
  location:
    | { kind: 'remote'; url: string; token?: string; credentialHelper?: string }
    | {
        kind: 'local';
        path: string;
        /** The path as configured (relative to the config, or as typed): what messages and provenance show. */
        given?: string;
      };
  /**
   * A pinned commit or a ref. A locked commit carries what its lock entry says it serves (`lock`), and under
   * `require: tag` the verified tag and the ref it was locked from (whose name the tag must carry).
   */
  target:
    | { kind: 'commit'; commit: string; tag?: string; ref?: string; lock?: LockedIndex }
    | { kind: 'ref'; ref: string }
    | RefsTarget;
  /**
   * A ref of a `refs:` source, served as a source of its own (`<id>.<ref>`): the configured source whose
   * repository store it shares, and the full name of the ref it follows. Made by sync, never by a config file.
   */
  group?: { id: string; ref: string };
  paths: string[];
  strictNames: boolean;
  /** Re-resolve the ref this often (ms); absent for pinned commits. */
  pollMs?: number;
  /** Previous commits kept serving after an update. */
  keep: number;
  /** Per-request network timeout (remote sources). */
  timeoutMs: number;
  /** A transfer (ref listing, fetch) still running this long fails (remote sources); absent: 10 minutes. */
  deadlineMs?: number;
  /** Bytes one fetch may bring (remote sources); absent: 1 GiB. */
  maxFetchBytes?: number;
  /** Objects one fetch's pack may hold (remote sources); absent: 2,000,000. */
  maxFetchObjects?: number;
  /** Whether a remote's redirects are followed (credentials never leave the configured origin); absent: follow. */
  redirects?: 'follow' | 'refuse';
  /** Which git runs (the config's `git:` section); absent: `defaultGitSettings()`. */
  git?: GitSettings;
  /** Signatures a commit needs before it is served; absent: none. */
  verify?: VerifyConfig;
  /** The owner's grants for skill_run; absent: nothing of this source runs. */
  run?: RunGrants;
  /** `cacheScope` of this source's results: whether a shared cache may keep them for every caller (absent: private). */
  cacheScope?: 'public' | 'private';
}

/**
 * `refs:`: every branch and tag matching one of `patterns` is served as its own namespace. `newest`: only the
 * newest that many are listed (absent: all); at most `maxRefs` match at all.
 */
export interface RefsTarget {
  kind: 'refs';
  patterns: string[];
  newest?: number;
  maxRefs: number;
}

/** One grant line: the script of the skill at a folder path ('' for the root), and the variables it may get. */
export interface Grant {
  skill: string;
  script: string;
  env: string[];
}

/** `run:` of a source: grant lines, or every declared script with every variable it declares. */
export type RunGrants = 'all-declared' | readonly Grant[];

/** The config's `runs:` section: how skill_run confirms and what it may start. */
export interface RunSettings {
  /** Hosts that cannot show a prompt: `ask-user` (the user approves a preview), `auto` (the model does), `refuse`. */
  confirm: 'ask-user' | 'auto' | 'refuse';
  /** Ask hosts that can show a prompt (elicitation) instead of returning a token. */
  elicitation: boolean;
  tokenTtlMs: number;
  /** Signs confirmation tokens (so they outlive a restart); absent: random per process. Never printed. */
  secret?: string;
  interpreters: Array<'node' | 'python3'>;
  /** Run scripts even when the initial environment block could not be cleared. */
  allowUnscrubbed: boolean;
  /** The user scripts run as (a name or a numeric uid); absent: the server's, or `nobody` when that is root. */
  user?: string;
}

/** A key file named by `verify:`, read when the config is loaded. */
export interface KeyFile {
  /** Where it was configured, for messages: `<config>: sources[0].verify.gpgKeys[0] (<path>)`. */
  label: string;
  text: string;
}

/** A source's `verify:` section, its key files read (git/signature parses them). */
export interface VerifyConfig {
  require: 'commit' | 'tag';
  /** git's gpg.ssh.allowedSignersFile format. */
  sshAllowedSigners?: KeyFile;
  /** Armored OpenPGP public keys. */
  gpgKeys: KeyFile[];
}

/** The config's `git:` section. */
export interface GitSettings {
  /** `cli` (the git binary), `isomorphic` (isomorphic-git), or `auto` (the binary when a recent one is on PATH). */
  backend: 'auto' | 'cli' | 'isomorphic';
  /** git's `http.proxy` for the cli backend; may hold credentials, never printed. */
  proxy?: string;
  /** The address space each git process may take (cli backend); absent: 1 GiB. */
  maxMemoryBytes?: number;
}

const BACKENDS = ['auto', 'cli', 'isomorphic'] as const;

function runSettingsOf(raw: RawConfig['runs'], secret: (reference: string) => string): RunSettings {
  return {
    confirm: raw.confirm,
    elicitation: raw.elicitation,
    tokenTtlMs: parseDuration(raw.tokenTtl),
    ...(raw.secret === undefined ? {} : { secret: secret(raw.secret) }),
    interpreters: raw.interpreters,
    allowUnscrubbed: raw.allowUnscrubbed,
    user: raw.user === undefined ? undefined : String(raw.user),
  };
}

/** `runs:` as a config without one has it. */
export function defaultRunSettings(): RunSettings {
  return runSettingsOf(configSchema.shape.runs.parse(undefined), (reference) => reference);
}

/**
 * The `git:` settings when the config does not say: `SKILLPIN_GIT_BACKEND` (one of auto, cli, isomorphic) or
 * `auto`. The variable lets a whole test run, or a deployment, pick the backend without editing configs.
 */
export function defaultGitSettings(env: NodeJS.ProcessEnv = process.env): GitSettings {
  const chosen = env['SKILLPIN_GIT_BACKEND'];
  if (chosen === undefined || chosen === '') return { backend: 'auto' };
  if (!(BACKENDS as readonly string[]).includes(chosen))
    throw new ConfigError(
      `SKILLPIN_GIT_BACKEND: must be one of ${BACKENDS.join(', ')}, not ${JSON.stringify(chosen)}`,
    );
  return { backend: chosen as GitSettings['backend'] };
}

/** A static bearer token's principal: its name (logs, sessions), its secret, and the sources it sees. */
export interface TokenPrincipal {
  name: string;
  /** Resolved from the environment; never printed. */
  token: string;
  /** Source ids; absent: every source. */
  sources?: string[];
}

/** The OAuth 2.1 resource server: which issuer's JWTs for which audience, and what each scope sees. */
export interface OAuthConfig {
  /** Compared with `iss` exactly as written. */
  issuer: string;
  /** This server's resource identifier (RFC 8707): `aud` must name it; the metadata document publishes it. */
  audience: string;
  /** Absent: the issuer's metadata names it (`jwks_uri`). */
  jwksUrl?: string;
  /** Scope → the source ids it sees, or `*` for every source. */
  scopes: Record<string, '*' | string[]>;
}

/** `auth:` (HTTP only). A plain optional field of Config: absent means no authentication. */
export interface AuthConfig {
  tokens: TokenPrincipal[];
  oauth?: OAuthConfig;
}

/** `coordination:` (HTTP replicas): Redis, where replicas share webhooks, the poll of each source and what they serve. */
export interface CoordinationConfig {
  /** The Redis URL as resolved from its environment reference: may hold a password, never printed. */
  redis: string;
  /** `host:port` of the URL, what logs and status name. */
  endpoint: string;
  /** TLS (`rediss://` or `tls:`), and the CA file's text when one is given. */
  tls?: { ca?: string };
  keyPrefix: string;
  connectTimeoutMs: number;
  commandTimeoutMs: number;
  /** How long a poll lease lasts unless renewed (at most the source's poll interval). */
  leaseMs: number;
}

/** Static tokens shorter than this are refused: they are guessable. */
export const MIN_TOKEN_LENGTH = 16;

export interface Config {
  file: string;
  dataDir: string;
  /** `lock:`: the lockfile whose commits are served (as `serve --locked`), and that `lock` and `update` write. */
  lock?: string;
  pageSize: number;
  /** Serve skill_list, skill_load and skill_file for hosts without the skills extension. */
  tools: boolean;
  /** Serve one prompt per listed skill. */
  prompts: boolean;
  /** At most this many prompts: the first listed skills (by URI). */
  maxPrompts: number;
  /** `ttlMs` of listings (they move with the refs) and of commit-pinned results (they never change). */
  cache: { listTtlMs: number; pinnedTtlMs: number };
  /** `metrics`: serve GET /metrics. */
  http: { allowedHosts?: string[]; allowedOrigins?: string[]; metrics: boolean };
  sync: {
    concurrency: number;
    timeoutMs: number;
    deadlineMs: number;
    maxFetchBytes: number;
    maxFetchObjects: number;
    redirects: 'follow' | 'refuse';
    retryMinMs: number;
    retryMaxMs: number;
  };
  git: GitSettings;
  /** Webhook endpoint settings (HTTP mode); absent: POST /hooks/git answers 404. */
  webhook?: { secret: string; maxBodyBytes: number };
  runs: RunSettings;
  /** Who may call the HTTP endpoint and what each caller sees; absent: anyone who reaches it sees everything. */
  auth?: AuthConfig;
  /** Replicas coordinated through Redis; absent: every replica follows on its own. */
  coordination?: CoordinationConfig;
  sources: SourceConfig[];
}

/** `paths:` entries as the indexer compares them: no `./` in front, no `/` at the end, the root as no entry. */
export function normalizePaths(paths: readonly string[]): string[] {
  return paths.map((p) => p.replace(/^\.\/|\/+$/g, '')).filter((p) => p !== '' && p !== '.');
}

/** Reads and validates a YAML config file. Throws `ConfigError` naming every problem at once. */
export function loadConfig(file: string, env: NodeJS.ProcessEnv = process.env): Config {
  const absolute = path.resolve(file);
  let text: string;
  try {
    text = readFileSync(absolute, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // A relative path names the folder it was resolved against: the user may be in another one than they think.
    const where = path.isAbsolute(file)
      ? ''
      : `: looked for ${absolute} (a relative path resolves against the current folder, ${process.cwd()})`;
    throw new ConfigError(
      `${file}: ${code === 'ENOENT' ? 'no such file' : 'cannot be read'} (${code ?? 'error'})${where}`,
    );
  }
  const counter = new LineCounter();
  const doc = parseDocument(text, {
    version: '1.2',
    schema: 'core',
    uniqueKeys: true,
    prettyErrors: false,
    lineCounter: counter,
  });
  const where = (offset: number) => {
    const { line, col } = counter.linePos(offset);
    return { line, column: col };
  };
  if (doc.errors.length > 0)
    throw new ConfigError(
      doc.errors.map((error) =>
        formatProblem(file, {
          ...where(error.pos[0]),
          message: `not valid YAML: ${error.message.split('\n', 1)[0]}`,
        }),
      ),
    );
  const data: unknown = doc.toJS() ?? {};
  const parsed = configSchema.safeParse(data);
  if (!parsed.success) {
    const problems = parsed.error.issues.flatMap((issue) => {
      const keys = issue.code === 'unrecognized_keys' ? issue.keys : [undefined];
      return plainWords(issue, data, configSchema).map((message, index) => ({
        ...positionOf(doc, counter, issue.path, keys[index]),
        ...(issue.path.length === 0 ? {} : { key: keyPath(issue.path) }),
        message,
      }));
    });
    // One problem per key (the first says what to fix; the others follow from it), in the order of the file.
    const seen = new Set<string>();
    const first = problems.filter((p) => {
      const id = `${p.key}\0${p.message.startsWith('unknown key') ? p.message : ''}`;
      if (seen.has(id)) return false;
      seen.add(id);
      return true;
    });
    first.sort((a, b) => (a.line ?? Infinity) - (b.line ?? Infinity) || (a.column ?? 0) - (b.column ?? 0));
    throw new ConfigError(first.map((p) => formatProblem(file, p)));
  }
  // Past the schema, every problem is still collected: the user fixes them all in one go.
  const problems: string[] = [];
  const problemAt = (segments: PropertyKey[], message: string) =>
    problems.push(
      formatProblem(file, { ...positionOf(doc, counter, segments), key: keyPath(segments), message }),
    );
  const raw = parsed.data;
  const fromEnv = (reference: string, segments: PropertyKey[]): string => {
    const name = ENV_REFERENCE.exec(reference)![1]!;
    const value = env[name];
    if (value === undefined || value === '') problemAt(segments, `environment variable ${name} is not set`);
    return value ?? '';
  };
  const git: GitSettings = {
    backend: raw.git.backend ?? defaultGitSettings(env).backend,
    maxMemoryBytes: raw.git.maxMemory,
    ...(raw.git.proxy === undefined
      ? {}
      : {
          proxy: ENV_REFERENCE.test(raw.git.proxy) ? fromEnv(raw.git.proxy, ['git', 'proxy']) : raw.git.proxy,
        }),
  };
  // Parsed once: every source takes its transfer limits from here.
  const sync: Config['sync'] = {
    concurrency: raw.sync.concurrency,
    timeoutMs: parseDuration(raw.sync.timeout),
    deadlineMs: parseDuration(raw.sync.deadline),
    maxFetchBytes: raw.sync.maxFetchBytes,
    maxFetchObjects: raw.sync.maxFetchObjects,
    redirects: raw.sync.redirects,
    retryMinMs: parseDuration(raw.sync.retryMin),
    retryMaxMs: parseDuration(raw.sync.retryMax),
  };
  const base = path.dirname(absolute);
  const keyFile = (name: string, segments: PropertyKey[]): KeyFile => {
    const label = `${file}: ${keyPath(segments)} (${name})`;
    try {
      return { label, text: readFileSync(path.resolve(base, name), 'utf8') };
    } catch (error) {
      problemAt(segments, `${name} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
      return { label, text: '' };
    }
  };
  const seen = new Set<string>();
  const sources = raw.sources.map((source, index): SourceConfig => {
    if (seen.has(source.id)) problemAt(['sources', index, 'id'], `"${source.id}" is used by another source`);
    seen.add(source.id);
    const token = source.token === undefined ? undefined : fromEnv(source.token, ['sources', index, 'token']);
    const url =
      source.github !== undefined
        ? shorthandUrl('github', source.github)
        : source.gitlab !== undefined
          ? shorthandUrl('gitlab', source.gitlab)
          : source.url;
    const at = ['sources', index, 'verify'];
    const verify: VerifyConfig | undefined =
      source.verify === undefined
        ? undefined
        : {
            require: source.verify.require,
            ...(source.verify.sshAllowedSigners === undefined
              ? {}
              : {
                  sshAllowedSigners: keyFile(source.verify.sshAllowedSigners, [...at, 'sshAllowedSigners']),
                }),
            gpgKeys: (source.verify.gpgKeys ?? []).map((name, i) => keyFile(name, [...at, 'gpgKeys', i])),
          };
    return {
      id: source.id,
      location:
        url !== undefined
          ? {
              kind: 'remote',
              url,
              ...(token === undefined ? {} : { token }),
              ...(source.credentialHelper === undefined ? {} : { credentialHelper: source.credentialHelper }),
            }
          : { kind: 'local', path: path.resolve(base, source.path!), given: source.path! },
      target:
        source.commit !== undefined
          ? { kind: 'commit', commit: source.commit }
          : source.refs !== undefined
            ? {
                kind: 'refs',
                patterns: source.refs,
                ...(source.list === undefined || source.list === 'all'
                  ? {}
                  : { newest: source.list === 'newest' ? 1 : source.list.newest }),
                maxRefs: source.maxRefs ?? DEFAULT_MAX_REFS,
              }
            : { kind: 'ref', ref: source.ref! },
      paths: normalizePaths(source.paths ?? []),
      strictNames: source.strictNames ?? raw.strictNames,
      ...(source.commit !== undefined ? {} : { pollMs: parseDuration(source.poll ?? raw.sync.poll) }),
      keep: source.keep ?? raw.sync.keep,
      timeoutMs: sync.timeoutMs,
      deadlineMs: sync.deadlineMs,
      maxFetchBytes: sync.maxFetchBytes,
      maxFetchObjects: sync.maxFetchObjects,
      redirects: sync.redirects,
      git,
      ...(verify === undefined ? {} : { verify }),
      ...(source.run === undefined
        ? {}
        : {
            run:
              source.run === 'all-declared'
                ? 'all-declared'
                : source.run.map((line) => ({
                    skill: line.skill === '.' ? '' : line.skill,
                    script: line.script,
                    env: line.env ?? [],
                  })),
          }),
      // What anyone may fetch, any cache may share; what needs credentials stays per caller. (Once the server
      // authenticates its callers, each sees its own view: every source is private then.)
      cacheScope:
        source.cacheScope ??
        (token !== undefined ||
        source.credentialHelper !== undefined ||
        (url !== undefined && ['ssh', 'scp'].includes(remoteKind(url) ?? ''))
          ? 'private'
          : 'public'),
    };
  });
  const webhook =
    raw.webhook === undefined
      ? undefined
      : {
          secret: fromEnv(raw.webhook.secret, ['webhook', 'secret']),
          maxBodyBytes: raw.webhook.maxBodyBytes,
        };
  const runs = runSettingsOf(raw.runs, (reference) => fromEnv(reference, ['runs', 'secret']));
  const authConfig = raw.auth === undefined ? undefined : resolveAuth(raw.auth, sources, problemAt, fromEnv);
  const coordination =
    raw.coordination === undefined
      ? undefined
      : resolveCoordination(raw.coordination, fromEnv, problemAt, (name, at) => keyFile(name, at).text);
  if (problems.length > 0) throw new ConfigError(problems);
  return {
    file: absolute,
    dataDir: path.resolve(base, raw.dataDir),
    ...(raw.lock === undefined ? {} : { lock: path.resolve(base, raw.lock) }),
    pageSize: raw.pageSize,
    tools: raw.tools,
    prompts: raw.prompts,
    maxPrompts: raw.maxPrompts,
    cache: raw.cache,
    http: raw.http,
    sync,
    git,
    ...(webhook === undefined ? {} : { webhook }),
    runs,
    ...(authConfig === undefined ? {} : { auth: authConfig }),
    ...(coordination === undefined ? {} : { coordination }),
    sources,
  };
}

/**
 * `coordination:` with its Redis URL read from the environment. A URL that is not redis:// or rediss:// is a
 * problem whose message never repeats the value (it may hold a password).
 */
function resolveCoordination(
  raw: NonNullable<RawConfig['coordination']>,
  fromEnv: (reference: string, segments: PropertyKey[]) => string,
  problemAt: (segments: PropertyKey[], message: string) => void,
  readFile: (name: string, segments: PropertyKey[]) => string,
): CoordinationConfig {
  const url = fromEnv(raw.redis, ['coordination', 'redis']);
  const name = ENV_REFERENCE.exec(raw.redis)![1]!;
  let endpoint = '';
  let secure = false;
  if (url !== '') {
    const parsed = URL.canParse(url) ? new URL(url) : undefined;
    if (parsed === undefined || !['redis:', 'rediss:'].includes(parsed.protocol) || parsed.hostname === '')
      problemAt(
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
        : { ca: readFile(raw.tls.ca, ['coordination', 'tls', 'ca']) };
  return {
    redis: url,
    endpoint,
    ...(tls === undefined ? {} : { tls }),
    keyPrefix: raw.keyPrefix,
    connectTimeoutMs: parseDuration(raw.connectTimeout),
    commandTimeoutMs: parseDuration(raw.commandTimeout),
    leaseMs: parseDuration(raw.lease),
  };
}

/** `auth:` with its tokens read from the environment, every source it names checked against `sources`. */
function resolveAuth(
  raw: NonNullable<RawConfig['auth']>,
  sources: readonly SourceConfig[],
  problemAt: (segments: PropertyKey[], message: string) => void,
  fromEnv: (reference: string, segments: PropertyKey[]) => string,
): AuthConfig {
  const known = new Set(sources.map((source) => source.id));
  const checkSources = (ids: readonly string[], segments: PropertyKey[]) => {
    for (const [index, id] of ids.entries())
      if (!known.has(id)) problemAt([...segments, index], `no source "${id}" is configured`);
  };
  const names = new Map<string, number>();
  const secrets = new Map<string, number>();
  const tokens = (raw.tokens ?? []).map((entry, index): TokenPrincipal => {
    const at = ['auth', 'tokens', index];
    const token = fromEnv(entry.token, [...at, 'token']);
    if (token !== '' && token.length < MIN_TOKEN_LENGTH)
      problemAt(
        [...at, 'token'],
        `the token is shorter than ${MIN_TOKEN_LENGTH} characters; use a random one (openssl rand -hex 32)`,
      );
    const sameName = names.get(entry.name);
    if (sameName !== undefined)
      problemAt([...at, 'name'], `"${entry.name}" is used by auth.tokens[${sameName}]`);
    const sameToken = secrets.get(token);
    if (token !== '' && sameToken !== undefined)
      problemAt([...at, 'token'], `holds the same token as auth.tokens[${sameToken}]`);
    names.set(entry.name, index);
    secrets.set(token, index);
    if (entry.sources !== undefined) checkSources(entry.sources, [...at, 'sources']);
    return {
      name: entry.name,
      token,
      ...(entry.sources === undefined ? {} : { sources: [...entry.sources] }),
    };
  });
  const oauth = raw.oauth;
  if (oauth !== undefined)
    for (const [scope, seen] of Object.entries(oauth.scopes))
      if (seen !== '*') checkSources(seen, ['auth', 'oauth', 'scopes', scope]);
  return {
    tokens,
    ...(oauth === undefined
      ? {}
      : {
          oauth: {
            issuer: oauth.issuer,
            audience: oauth.audience,
            ...(oauth.jwksUrl === undefined ? {} : { jwksUrl: oauth.jwksUrl }),
            scopes: Object.fromEntries(
              Object.entries(oauth.scopes).map(([scope, seen]) => [scope, seen === '*' ? '*' : [...seen]]),
            ),
          },
        }),
  };
}
