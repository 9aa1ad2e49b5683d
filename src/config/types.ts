/** The config as the rest of the program sees it, once loaded and checked (config/load.ts). */

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
  /** The secret every replica signs and checks publications with (HMAC-SHA256), from its environment reference. */
  secret: string;
  /** TLS (`rediss://` or `tls:`), and the CA file's text when one is given. */
  tls?: { ca?: string };
  keyPrefix: string;
  connectTimeoutMs: number;
  commandTimeoutMs: number;
  /** How long a poll lease lasts unless renewed (at most the source's poll interval). */
  leaseMs: number;
}

export interface Config {
  file: string;
  dataDir: string;
  /** Where dataDir was set, for a message that it cannot be used: `file:line`, or the default. */
  dataDirFrom?: string;
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
