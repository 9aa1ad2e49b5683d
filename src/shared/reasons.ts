/**
 * Every why-not code of skillpin, in one registry: why a skill, file or source is not served (or served with a
 * warning), why a script does not run, why an HTTP request is refused, how a webhook delivery ended. Stable
 * kebab-case codes (clients, logs, metrics and tests match on them), each with where it appears (`kind`) and a
 * sentence; docs/reasons.md lists every one.
 */
export const REASONS = {
  // Errors: the thing is not served.
  'skill-md-not-file': {
    kind: 'skill',
    severity: 'error',
    summary:
      "SKILL.md is not a regular file: a folder, a submodule, or a symlink to a file that is not a skill folder's SKILL.md",
  },
  'skill-link-outside': {
    kind: 'skill',
    severity: 'error',
    summary: 'SKILL.md is a symlink that leaves the repository (or is absolute)',
  },
  'skill-link-dangling': {
    kind: 'skill',
    severity: 'error',
    summary: 'SKILL.md is a symlink to a path that is not in the commit',
  },
  'skill-link-loop': {
    kind: 'skill',
    severity: 'error',
    summary: 'SKILL.md is a symlink that loops or chains past MAX_SYMLINK_HOPS (8) links',
  },
  'skill-md-not-utf8': { kind: 'skill', severity: 'error', summary: 'SKILL.md is not valid UTF-8' },
  'frontmatter-missing': {
    kind: 'skill',
    severity: 'error',
    summary: 'SKILL.md does not open with a "---" frontmatter block',
  },
  'frontmatter-unclosed': {
    kind: 'skill',
    severity: 'error',
    summary: 'the frontmatter block has no closing "---" line',
  },
  'frontmatter-too-large': {
    kind: 'skill',
    severity: 'error',
    summary: 'the frontmatter is larger than MAX_FRONTMATTER_BYTES',
  },
  'frontmatter-invalid': {
    kind: 'skill',
    severity: 'error',
    summary:
      'the frontmatter is not a YAML 1.2 mapping the protocol can carry (syntax, anchors, aliases, tags, non-JSON values)',
  },
  'name-missing': { kind: 'skill', severity: 'error', summary: 'the frontmatter has no name' },
  'name-invalid': {
    kind: 'skill',
    severity: 'error',
    summary: 'name is not 1-64 characters of a-z, 0-9 and single hyphens',
  },
  'name-mismatch-refused': {
    kind: 'skill',
    severity: 'error',
    summary: 'name differs from the folder and strictNames is on',
  },
  'description-missing': { kind: 'skill', severity: 'error', summary: 'the frontmatter has no description' },
  'description-invalid': {
    kind: 'skill',
    severity: 'error',
    summary: 'description is not a string of 1-1024 characters',
  },
  'compatibility-invalid': {
    kind: 'skill',
    severity: 'error',
    summary: 'compatibility is not a string of 1-500 characters',
  },
  'metadata-invalid': {
    kind: 'skill',
    severity: 'error',
    summary: 'metadata is not a map of strings to strings',
  },
  'too-many-files': {
    kind: 'skill',
    severity: 'error',
    summary: 'the skill has more files than the extension allows (512, nested skills included)',
  },
  'too-large': {
    kind: 'skill',
    severity: 'error',
    summary: 'the skill is larger than the extension allows (16 MiB, nested skills included)',
  },
  'uri-too-long': {
    kind: 'skill',
    severity: 'error',
    summary:
      'a file of the skill would have a URI longer than MAX_URI_BYTES (4096 bytes), which clients cannot send to read it',
  },
  'skill-path-invalid': {
    kind: 'skill',
    severity: 'error',
    summary:
      'the skill folder\'s path holds a name that cannot be served (".", "..", ".git", a control character, a backslash or bytes that are not UTF-8)',
  },
  'path-collision': {
    kind: 'skill',
    severity: 'error',
    summary: 'the path the skill would be served under is taken by another skill or folder',
  },
  'paths-not-found': {
    kind: 'folder',
    severity: 'error',
    summary:
      'a folder named in paths (the config, or check --paths) is not in the commit, so nothing is searched there',
  },
  'frontmatter-unsupported': {
    kind: 'skill',
    severity: 'error',
    summary:
      "the MCP SDK's frontmatter reader, which hosts verify SKILL.md with, refuses this frontmatter or reads it differently",
  },
  // A ref of a `refs:` source that is not served (the source serves its other refs).
  'ref-id-collision': {
    kind: 'ref',
    severity: 'error',
    summary:
      'two refs of a refs: source map to one source id: the one served first keeps it and the newcomer is not served (neither, when both are new); or a ref maps to the id of another source',
  },
  'ref-id-invalid': {
    kind: 'ref',
    severity: 'error',
    summary:
      'a ref of a refs: source makes no valid source id (past 64 characters, or starting or ending with "-" or ".")',
  },
  'refs-over-limit': {
    kind: 'ref',
    severity: 'error',
    summary: 'more refs match a refs: source than its maxRefs: the oldest are not served',
  },
  // Source errors: the source serves nothing new (a previously served commit keeps serving).
  'source-not-a-repository': {
    kind: 'source',
    severity: 'error',
    summary: 'the configured path is not a git repository',
  },
  'source-commit-not-found': {
    kind: 'source',
    severity: 'error',
    summary: 'the configured commit does not exist (or the remote will not serve it)',
  },
  'source-ref-not-found': {
    kind: 'source',
    severity: 'error',
    summary: 'the configured ref does not resolve',
  },
  'source-ref-ambiguous': {
    kind: 'source',
    severity: 'error',
    summary: 'the configured ref names both a branch and a tag',
  },
  'source-incomplete': {
    kind: 'source',
    severity: 'error',
    summary: 'objects of the commit are missing from the repository',
  },
  'source-auth-failed': { kind: 'source', severity: 'error', summary: 'the remote refused the credentials' },
  'source-repository-not-found': {
    kind: 'source',
    severity: 'error',
    summary: 'the remote answered 404: no repository at that URL (or no access to it)',
  },
  'source-unreachable': {
    kind: 'source',
    severity: 'error',
    summary: 'the remote could not be reached (connection refused, reset, no route, unknown host)',
  },
  'source-timeout': {
    kind: 'source',
    severity: 'error',
    summary: 'the remote sent nothing for longer than sync.timeout, or the transfer outlasted sync.deadline',
  },
  'source-http-error': {
    kind: 'source',
    severity: 'error',
    summary: 'the remote answered with an HTTP error (5xx or another unexpected status)',
  },
  'source-pack-invalid': {
    kind: 'source',
    severity: 'error',
    summary:
      'the remote sent an empty, truncated or corrupt pack (an object that inflates past the size its header declares is one)',
  },
  'source-disk-full': {
    kind: 'source',
    severity: 'error',
    summary: 'no space left (or a quota or file-size limit reached) on the device holding dataDir',
  },
  'source-too-large': {
    kind: 'source',
    severity: 'error',
    summary:
      "the transfer passed sync.maxFetchBytes or sync.maxFetchObjects, git ran out of git.maxMemory, a commit, tree, tag or delta of it inflates past MAX_OBJECT_BYTES, its blobs over MAX_OBJECT_BYTES declare more than MAX_LARGE_BLOB_BYTES together, or the commit's tree lists past MAX_TREE_ENTRIES entries",
  },
  'source-insecure-redirect': {
    kind: 'source',
    severity: 'error',
    summary:
      'the remote redirected from https to http (refused: credentials and content would travel in clear)',
  },
  'source-redirect-refused': {
    kind: 'source',
    severity: 'error',
    summary: 'the remote redirected, and sync.redirects is refuse (or it redirected too many times)',
  },
  'source-store-damaged': {
    kind: 'source',
    severity: 'error',
    summary:
      'objects of a served commit are missing from the store (or its index file is wrong): being repaired, or a repair left its reads failing',
  },
  'source-fetch-failed': {
    kind: 'source',
    severity: 'error',
    summary: 'the transfer failed for another reason (see the detail)',
  },
  'source-unsupported': {
    kind: 'source',
    severity: 'error',
    summary:
      'the running git backend cannot serve this source (SSH, file URLs and credential helpers need the git binary)',
  },
  'source-unsigned': {
    kind: 'source',
    severity: 'error',
    summary:
      'verify is configured and the commit (or, with require: tag, the tag the ref names) carries no signature',
  },
  'source-signature-invalid': {
    kind: 'source',
    severity: 'error',
    summary:
      "the signature does not verify (tampered or malformed, another namespace, an unsupported algorithm), or a signed tag's name is not the ref it was reached through",
  },
  'source-signer-unknown': {
    kind: 'source',
    severity: 'error',
    summary: 'the signing key is not among the configured sshAllowedSigners or gpgKeys',
  },
  'source-signer-not-allowed': {
    kind: 'source',
    severity: 'error',
    summary: 'the signing key is known but not allowed to sign git objects (allowed_signers namespaces)',
  },
  'source-signer-expired': {
    kind: 'source',
    severity: 'error',
    summary:
      'the OpenPGP key has expired or was revoked, or the commit time is outside the SSH key valid-after/valid-before',
  },
  'source-lock-mismatch': {
    kind: 'source',
    severity: 'error',
    summary:
      "serving a lockfile, the locked commit's tree, or a skill's path, name, file count, bytes or digest, is not what the lockfile lists",
  },
  'source-pending': {
    kind: 'source',
    severity: 'error',
    summary:
      'another skillpin process on this dataDir, or the replica polling the source, syncs it and has not published it yet',
  },
  'source-internal': {
    kind: 'source',
    severity: 'error',
    summary: 'an unexpected error while syncing the source (see logs)',
  },
  // Requests refused by authentication (HTTP): logged with the caller's address, never with the token.
  'auth-missing': {
    kind: 'request',
    severity: 'error',
    summary: 'the request carries no bearer token (401)',
  },
  'auth-token-invalid': {
    kind: 'request',
    severity: 'error',
    summary:
      'the bearer token is no configured token and no valid JWT (malformed, bad signature, no exp, another algorithm) (401)',
  },
  'auth-token-expired': {
    kind: 'request',
    severity: 'error',
    summary: 'the JWT has expired, or is not valid yet (exp, nbf, beyond the clock skew) (401)',
  },
  'auth-issuer-mismatch': {
    kind: 'request',
    severity: 'error',
    summary: 'the JWT was issued by another issuer (iss) (401)',
  },
  'auth-audience-mismatch': {
    kind: 'request',
    severity: 'error',
    summary: 'the JWT is meant for another resource (aud is not the configured audience) (401)',
  },
  'auth-key-unknown': {
    kind: 'request',
    severity: 'error',
    summary: "the JWT's signing key (kid) is not in the issuer's JWKS, even after fetching it again (401)",
  },
  'auth-issuer-unavailable': {
    kind: 'request',
    severity: 'error',
    summary: "the issuer's metadata or JWKS could not be fetched or read, so no JWT can be checked (503)",
  },
  // Warnings: served, but look. Files left out of a skill are warnings on the file; the skill still serves.
  'name-mismatch': {
    kind: 'skill',
    severity: 'warning',
    summary: 'name differs from the folder; served under its name',
  },
  'duplicate-name': {
    kind: 'skill',
    severity: 'warning',
    summary: 'another served skill of the same commit has the same name',
  },
  'symlink-outside-skill': {
    kind: 'file',
    severity: 'warning',
    summary: 'a symlink that leaves its skill (or is absolute) was left out',
  },
  'symlink-dangling': {
    kind: 'file',
    severity: 'warning',
    summary: 'a symlink whose target is not in the commit was left out',
  },
  'symlink-loop': { kind: 'file', severity: 'warning', summary: 'a symlink that loops was left out' },
  'skills-not-found': {
    kind: 'folder',
    severity: 'warning',
    summary:
      'skillpin check found no SKILL.md in the repository (or under a folder of --paths), so the commit serves no skill',
  },
  submodule: {
    kind: 'file',
    severity: 'warning',
    summary: 'a submodule entry has no content in this commit and was left out',
  },
  'lfs-pointer': {
    kind: 'file',
    severity: 'warning',
    summary: 'a Git LFS pointer file is served as the pointer text the commit holds, not the large file',
  },
  'file-name-invalid': {
    kind: 'file',
    severity: 'warning',
    summary:
      'a file whose path holds a name that cannot be served (".", "..", ".git", a control character, a backslash or bytes that are not UTF-8) was left out',
  },
  // Information: nothing is wrong, and nothing is lost; said so that nothing is silent.
  'skill-alias': {
    kind: 'skill',
    severity: 'info',
    summary:
      'a SKILL.md or skill folder that is a symlink (resolved in the commit) to a skill: one skill, served once at its target',
  },
  // Scripts (skill_run): the skill and its files still serve; what is reported is what will not run.
  declaration: {
    kind: 'skill',
    severity: 'warning',
    summary:
      'the mcp-host: block is refused (its scripts are not declared) or holds keys this server ignores (named in the detail)',
  },
  'declared-script-missing': {
    kind: 'script',
    severity: 'warning',
    summary: 'a script the mcp-host: block declares is not a file of the skill; it cannot run',
  },
  grant: {
    kind: 'script',
    severity: 'warning',
    summary:
      "a run: line of the config names a skill, script or variable the skill's declaration does not have; the line grants nothing",
  },
  'interpreter-unavailable': {
    kind: 'script',
    severity: 'warning',
    summary:
      'a granted script needs an interpreter this deployment does not run (not allowed, or not installed)',
  },
  'environ-unscrubbed': {
    kind: 'script',
    severity: 'warning',
    summary:
      "the process's initial environment block (/proc/self/environ) could not be cleared, so no script runs (unless runs.allowUnscrubbed)",
  },
  // skill_run's refusals: the script did not run (the tool result's `code`; its `reason`, when one applies, is a
  // code above).
  'run-skill-not-found': {
    kind: 'run',
    severity: 'error',
    summary: 'skill_run names no served skill (or gives both uri and name, or neither)',
  },
  'run-not-declared': {
    kind: 'run',
    severity: 'error',
    summary: "the script is not one the skill's mcp-host: block declares; only declared scripts run",
  },
  'run-not-granted': {
    kind: 'run',
    severity: 'error',
    summary: 'no run: line of the config grants the script (reason grant)',
  },
  'run-unavailable': {
    kind: 'run',
    severity: 'error',
    summary:
      'the script is granted but cannot run in this deployment (reason interpreter-unavailable or environ-unscrubbed)',
  },
  'run-args-invalid': {
    kind: 'run',
    severity: 'error',
    summary: 'more than MAX_ARGS arguments or MAX_ARGS_BYTES of them, or an argument holding a NUL',
  },
  'run-confirmation-unavailable': {
    kind: 'run',
    severity: 'error',
    summary: 'runs.confirm is refuse and the host cannot ask its user (elicitation)',
  },
  'run-token-invalid': {
    kind: 'run',
    severity: 'error',
    summary: 'the confirmToken is not one this server issued',
  },
  'run-token-expired': {
    kind: 'run',
    severity: 'error',
    summary: 'the confirmToken is older than runs.tokenTtl',
  },
  'run-token-reused': {
    kind: 'run',
    severity: 'error',
    summary: 'the confirmToken confirmed a run already; each confirms one',
  },
  'run-token-other-caller': {
    kind: 'run',
    severity: 'error',
    summary: 'the confirmToken was issued to another caller (another principal, or stdio rather than HTTP)',
  },
  'run-preview-changed': {
    kind: 'run',
    severity: 'error',
    summary:
      "the run differs from the preview the confirmToken was issued for (another commit, the script's bytes, the arguments)",
  },
  'run-busy': {
    kind: 'run',
    severity: 'error',
    summary: 'another script is running (one at a time); the confirmToken is still good',
  },
  'run-failed': {
    kind: 'run',
    severity: 'error',
    summary: "the skill's files could not be materialised or the interpreter could not be started (see logs)",
  },
  'run-cancelled': {
    kind: 'run',
    severity: 'error',
    summary: 'the request was cancelled before the script started; nothing ran',
  },
  'run-user-unavailable': {
    kind: 'run',
    severity: 'error',
    summary:
      'runs.user names no user, or another user while skillpin is not root, or the switch to it was refused',
  },
  // Why a replica did not take what it read in Redis as the polling replica's publication: it lists the refs itself.
  'publication-unsigned': {
    kind: 'publication',
    severity: 'error',
    summary: 'the publication in Redis carries no signature: not written by a replica (coordination.secret)',
  },
  'publication-forged': {
    kind: 'publication',
    severity: 'error',
    summary:
      "the publication's signature does not verify with coordination.secret: a field was changed, or it was signed with another secret",
  },
  'publication-stale': {
    kind: 'publication',
    severity: 'warning',
    summary:
      "the publication's time (Redis's, signed by the holder) is further from Redis's time than the source's poll interval and lease: a replay, or a holder that stopped",
  },
  'publication-replayed': {
    kind: 'publication',
    severity: 'error',
    summary:
      'an authentic publication older than one this replica already read, naming another commit: a replay',
  },
  'publication-backward': {
    kind: 'publication',
    severity: 'error',
    summary:
      'the published commit is one this replica moved away from: a branch never moves back on a publication alone',
  },
  'publication-tag-moved': {
    kind: 'publication',
    severity: 'warning',
    summary: 'the published commit for a tag differs from what this replica resolved the tag to',
  },
  // How a webhook delivery (POST /hooks/git) ended: the outcome label of skillpin_webhook_deliveries_total.
  'webhook-triggered': {
    kind: 'webhook',
    severity: 'info',
    summary: 'an authentic push or ref event: the sources it moves sync at once (202)',
  },
  'webhook-ignored': {
    kind: 'webhook',
    severity: 'info',
    summary: 'a GitHub event that moves no ref (not push, create or delete): nothing syncs (202)',
  },
  'webhook-ping': { kind: 'webhook', severity: 'info', summary: "GitHub's ping: nothing syncs (200)" },
  'webhook-replayed': {
    kind: 'webhook',
    severity: 'info',
    summary: 'a delivery id seen within REPLAY_WINDOW_MS: acknowledged, nothing syncs again (200)',
  },
  'webhook-unauthorized': {
    kind: 'webhook',
    severity: 'error',
    summary:
      'the delivery does not carry the secret (signature, X-Gitlab-Token or bearer token): nothing syncs (401)',
  },
  'webhook-invalid': {
    kind: 'webhook',
    severity: 'error',
    summary:
      'the payload is not the event it claims to be (not a JSON object, a field missing): nothing syncs (400)',
  },
  'webhook-too-large': {
    kind: 'webhook',
    severity: 'error',
    summary: 'the body is larger than webhook.maxBodyBytes: refused before it is read (413)',
  },
  // A file of the dataDir, or a lease in it, as a process on it finds them (logged; `skillpin status` lists them).
  'datadir-file-oversized': {
    kind: 'datadir',
    severity: 'error',
    summary:
      'a file of the dataDir is larger than its bound (a lease, a process file, state.json, an index file): not read, taken as damaged',
  },
  'datadir-file-not-regular': {
    kind: 'datadir',
    severity: 'error',
    summary:
      'a file of the dataDir is not a regular file (a FIFO, a device, a folder): not read, taken as damaged',
  },
  'datadir-file-damaged': {
    kind: 'datadir',
    severity: 'error',
    summary:
      'a lease, process file or state.json of the dataDir is not the JSON skillpin writes: taken as damaged',
  },
  'lease-holder-gone': {
    kind: 'datadir',
    severity: 'warning',
    summary:
      "a source lease's holder is not running (its pid is gone, or another process reuses it): taken over",
  },
  'lease-not-renewed': {
    kind: 'datadir',
    severity: 'warning',
    summary:
      "a source lease's holder did not renew it within HOLDER_STALE_MS (not skillpin, or stuck): taken over",
  },
} as const satisfies Record<
  string,
  { kind: ReasonKind; severity: 'error' | 'warning' | 'info'; summary: string }
>;

/**
 * What a code is about, where it is reported: a skill, a file of one, a folder named in `paths`, a ref of a
 * `refs:` source or a declared script (the problems of a commit); a whole source (its sync); an HTTP request
 * (authentication); a skill_run call; a webhook delivery; a publication read from Redis (coordination); a file or
 * lease of the dataDir.
 */
export type ReasonKind =
  | 'skill'
  | 'file'
  | 'folder'
  | 'ref'
  | 'script'
  | 'source'
  | 'request'
  | 'run'
  | 'webhook'
  | 'publication'
  | 'datadir';

export type Reason = keyof typeof REASONS;

/** The codes of the kinds in `K`: only a registered code of that kind compiles where one is expected. */
export type ReasonOf<K extends ReasonKind> = {
  [R in Reason]: (typeof REASONS)[R]['kind'] extends K ? R : never;
}[Reason];

/** What a commit's problems (index, check, status) are reported for: the things a commit holds. */
const PROBLEM_KINDS = ['skill', 'file', 'folder', 'ref', 'script'] as const;
export type ProblemReason = ReasonOf<(typeof PROBLEM_KINDS)[number]>;
export type Severity = (typeof REASONS)[ProblemReason]['severity'];

/** Why a whole source serves nothing new: the `source-` reasons. */
export type SourceReason = ReasonOf<'source'>;

/** Why a request was refused by authentication: the `auth-` reasons. */
export type AuthReason = ReasonOf<'request'>;

function isOfKind(code: string, kinds: readonly ReasonKind[]): boolean {
  return Object.hasOwn(REASONS, code) && kinds.includes(REASONS[code as Reason].kind);
}

export function isProblemReason(code: string): code is ProblemReason {
  return isOfKind(code, PROBLEM_KINDS);
}

export function isSourceReason(code: string): code is SourceReason {
  return isOfKind(code, ['source']);
}

/** What a full disk says, by errno code: no space, no quota left, or a file-size limit (`ulimit -f`). */
const FULL: Record<string, string> = {
  ENOSPC: 'no space left on the device holding dataDir',
  EDQUOT: 'the disk quota of dataDir is used up',
  EFBIG: 'a file-size limit stops writes in dataDir',
};

/** The one mapping of file-system errors to a source reason: a full disk (or quota) where dataDir is. */
export function errnoReason(error: unknown): { reason: SourceReason; detail: string } | undefined {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  const detail = code === undefined ? undefined : FULL[code];
  return detail === undefined ? undefined : { reason: 'source-disk-full', detail };
}

/** A problem found in one commit, located by its path in the repository. */
export interface SkillProblem {
  path: string;
  reason: ProblemReason;
  severity: Severity;
  detail: string;
  /** The line of the file it is about (1-based): the frontmatter key, or the YAML error. */
  line?: number;
}

export function problem(path: string, reason: ProblemReason, detail: string, line?: number): SkillProblem {
  return {
    path,
    reason,
    severity: REASONS[reason].severity,
    detail,
    // Absent, not undefined: problems are compared with isDeepStrictEqual against those read back from JSON.
    ...(line === undefined ? {} : { line }),
  };
}
