import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseDocument } from 'yaml';
import { formatProblem, keyPath, LineCounter, plainWords, positionOf } from './messages.ts';
import { parseDuration } from './duration.ts';
import { ConfigError } from './error.ts';
import { configSchema, ENV_REFERENCE, type RawConfig } from './schema.ts';
import { shorthandUrl } from './shorthand.ts';
import {
  DEFAULT_MAX_REFS,
  defaultGitSettings,
  MIN_TOKEN_LENGTH,
  normalizePaths,
  remoteKind,
} from './rules.ts';
import type {
  AuthConfig,
  Config,
  CoordinationConfig,
  GitSettings,
  KeyFile,
  RunSettings,
  SourceConfig,
  TokenPrincipal,
  VerifyConfig,
} from './types.ts';

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
