import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseDocument } from 'yaml';
import { configSchema, ENV_REFERENCE, parseDuration } from './schema.ts';
import { shorthandUrl } from './shorthand.ts';

/** A source as the rest of the program sees it: paths absolute, secrets resolved (and never printed). */
export interface SourceConfig {
  id: string;
  location:
    | { kind: 'remote'; url: string; token?: string; credentialHelper?: string }
    | { kind: 'local'; path: string };
  /** A pinned commit (with the annotated tag verified for it, when locked under `require: tag`), or a ref. */
  target: { kind: 'commit'; commit: string; tag?: string } | { kind: 'ref'; ref: string };
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
  /** Whether a remote's redirects are followed (credentials never leave the configured origin); absent: follow. */
  redirects?: 'follow' | 'refuse';
  /** Which git runs (the config's `git:` section); absent: `defaultGitSettings()`. */
  git?: GitSettings;
  /** Signatures a commit needs before it is served; absent: none. */
  verify?: VerifyConfig;
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
}

const BACKENDS = ['auto', 'cli', 'isomorphic'] as const;

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
  cache: { ttlMs: number; cacheScope: 'public' | 'private' };
  http: { allowedHosts?: string[]; allowedOrigins?: string[] };
  sync: {
    concurrency: number;
    timeoutMs: number;
    deadlineMs: number;
    maxFetchBytes: number;
    redirects: 'follow' | 'refuse';
    retryMinMs: number;
    retryMaxMs: number;
  };
  git: GitSettings;
  /** Webhook endpoint settings (HTTP mode); absent: POST /hooks/git answers 404. */
  webhook?: { secret: string; maxBodyBytes: number };
  sources: SourceConfig[];
}

/** A configuration that cannot be used: the message names the file and the key. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

function keyPath(segments: ReadonlyArray<PropertyKey>): string {
  return (
    segments
      .map((segment, index) =>
        typeof segment === 'number' ? `[${segment}]` : `${index === 0 ? '' : '.'}${String(segment)}`,
      )
      .join('') || '(top level)'
  );
}

/** Reads and validates a YAML config file. Throws `ConfigError` with one clear message. */
export function loadConfig(file: string, env: NodeJS.ProcessEnv = process.env): Config {
  const absolute = path.resolve(file);
  let text: string;
  try {
    text = readFileSync(absolute, 'utf8');
  } catch (error) {
    throw new ConfigError(`${file}: cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  const doc = parseDocument(text, { version: '1.2', schema: 'core', uniqueKeys: true, prettyErrors: false });
  const yamlError = doc.errors[0];
  if (yamlError !== undefined)
    throw new ConfigError(`${file}: not valid YAML: ${yamlError.message.split('\n', 1)[0]}`);
  const parsed = configSchema.safeParse(doc.toJS() ?? {});
  if (!parsed.success) {
    // A mistyped key explains the other issues it causes (a required key "missing"), so it is named first.
    const issue = parsed.error.issues.find((i) => i.code === 'unrecognized_keys') ?? parsed.error.issues[0]!;
    const key = keyPath(issue.path);
    const message =
      issue.code === 'unrecognized_keys'
        ? `unknown key${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => JSON.stringify(k)).join(', ')}`
        : issue.message;
    throw new ConfigError(`${file}: ${key}: ${message}`);
  }
  const raw = parsed.data;
  const fromEnv = (reference: string, key: string): string => {
    const name = ENV_REFERENCE.exec(reference)![1]!;
    const value = env[name];
    if (value === undefined || value === '')
      throw new ConfigError(`${file}: ${key}: environment variable ${name} is not set`);
    return value;
  };
  const git: GitSettings = {
    backend: raw.git.backend ?? defaultGitSettings(env).backend,
    ...(raw.git.proxy === undefined
      ? {}
      : { proxy: ENV_REFERENCE.test(raw.git.proxy) ? fromEnv(raw.git.proxy, 'git.proxy') : raw.git.proxy }),
  };
  const base = path.dirname(absolute);
  const keyFile = (name: string, key: string): KeyFile => {
    const label = `${file}: ${key} (${name})`;
    try {
      return { label, text: readFileSync(path.resolve(base, name), 'utf8') };
    } catch (error) {
      throw new ConfigError(`${label}: cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
    }
  };
  const seen = new Set<string>();
  const sources = raw.sources.map((source, index): SourceConfig => {
    if (seen.has(source.id))
      throw new ConfigError(`${file}: sources[${index}].id: "${source.id}" is used by another source`);
    seen.add(source.id);
    const token = source.token === undefined ? undefined : fromEnv(source.token, `sources[${index}].token`);
    const url =
      source.github !== undefined
        ? shorthandUrl('github', source.github)
        : source.gitlab !== undefined
          ? shorthandUrl('gitlab', source.gitlab)
          : source.url;
    const at = `sources[${index}].verify`;
    const verify: VerifyConfig | undefined =
      source.verify === undefined
        ? undefined
        : {
            require: source.verify.require,
            ...(source.verify.sshAllowedSigners === undefined
              ? {}
              : { sshAllowedSigners: keyFile(source.verify.sshAllowedSigners, `${at}.sshAllowedSigners`) }),
            gpgKeys: (source.verify.gpgKeys ?? []).map((name, i) => keyFile(name, `${at}.gpgKeys[${i}]`)),
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
          : { kind: 'local', path: path.resolve(base, source.path!) },
      target:
        source.commit !== undefined
          ? { kind: 'commit', commit: source.commit }
          : { kind: 'ref', ref: source.ref! },
      paths: (source.paths ?? [])
        .map((p) => p.replace(/^\.\/|\/+$/g, ''))
        .filter((p) => p !== '' && p !== '.'),
      strictNames: source.strictNames ?? raw.strictNames,
      ...(source.ref === undefined ? {} : { pollMs: parseDuration(source.poll ?? raw.sync.poll) }),
      keep: source.keep ?? raw.sync.keep,
      timeoutMs: parseDuration(raw.sync.timeout),
      deadlineMs: parseDuration(raw.sync.deadline),
      maxFetchBytes: raw.sync.maxFetchBytes,
      redirects: raw.sync.redirects,
      git,
      ...(verify === undefined ? {} : { verify }),
    };
  });
  return {
    file: absolute,
    dataDir: path.resolve(base, raw.dataDir),
    ...(raw.lock === undefined ? {} : { lock: path.resolve(base, raw.lock) }),
    pageSize: raw.pageSize,
    tools: raw.tools,
    prompts: raw.prompts,
    cache: { ttlMs: raw.cache.ttlMs, cacheScope: raw.cache.scope },
    http: raw.http,
    sync: {
      concurrency: raw.sync.concurrency,
      timeoutMs: parseDuration(raw.sync.timeout),
      deadlineMs: parseDuration(raw.sync.deadline),
      maxFetchBytes: raw.sync.maxFetchBytes,
      redirects: raw.sync.redirects,
      retryMinMs: parseDuration(raw.sync.retryMin),
      retryMaxMs: parseDuration(raw.sync.retryMax),
    },
    git,
    ...(raw.webhook === undefined
      ? {}
      : {
          webhook: {
            secret: fromEnv(raw.webhook.secret, 'webhook.secret'),
            maxBodyBytes: raw.webhook.maxBodyBytes,
          },
        }),
    sources,
  };
}
