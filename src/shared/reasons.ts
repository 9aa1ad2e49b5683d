/** Every reason a skill, file or source is reported for. Stable codes: tools and tests match on them. */
export const REASONS = {
  // Errors: the thing is not served.
  'skill-md-not-file': {
    severity: 'error',
    summary: 'SKILL.md is not a regular file (a folder, symlink or submodule)',
  },
  'skill-md-not-utf8': { severity: 'error', summary: 'SKILL.md is not valid UTF-8' },
  'frontmatter-missing': {
    severity: 'error',
    summary: 'SKILL.md does not open with a "---" frontmatter block',
  },
  'frontmatter-unclosed': { severity: 'error', summary: 'the frontmatter block has no closing "---" line' },
  'frontmatter-too-large': {
    severity: 'error',
    summary: 'the frontmatter is larger than MAX_FRONTMATTER_BYTES',
  },
  'frontmatter-invalid': {
    severity: 'error',
    summary:
      'the frontmatter is not a YAML 1.2 mapping the protocol can carry (syntax, anchors, aliases, tags, non-JSON values)',
  },
  'name-missing': { severity: 'error', summary: 'the frontmatter has no name' },
  'name-invalid': {
    severity: 'error',
    summary: 'name is not 1-64 characters of a-z, 0-9 and single hyphens',
  },
  'name-mismatch-refused': {
    severity: 'error',
    summary: 'name differs from the folder and strictNames is on',
  },
  'description-missing': { severity: 'error', summary: 'the frontmatter has no description' },
  'description-invalid': { severity: 'error', summary: 'description is not a string of 1-1024 characters' },
  'compatibility-invalid': {
    severity: 'error',
    summary: 'compatibility is not a string of 1-500 characters',
  },
  'metadata-invalid': { severity: 'error', summary: 'metadata is not a map of strings to strings' },
  'too-many-files': {
    severity: 'error',
    summary: 'the skill has more files than the extension allows (512, nested skills included)',
  },
  'too-large': {
    severity: 'error',
    summary: 'the skill is larger than the extension allows (16 MiB, nested skills included)',
  },
  'uri-too-long': {
    severity: 'error',
    summary:
      'a file of the skill would have a URI longer than MAX_URI_BYTES (4096 bytes), which clients cannot send to read it',
  },
  'skill-path-invalid': {
    severity: 'error',
    summary:
      'the skill folder\'s path holds a name that cannot be served (".", "..", ".git", a control character, a backslash or bytes that are not UTF-8)',
  },
  'path-collision': {
    severity: 'error',
    summary: 'the path the skill would be served under is taken by another skill or folder',
  },
  'paths-not-found': {
    severity: 'error',
    summary:
      'a folder named in paths (the config, or check --paths) is not in the commit, so nothing is searched there',
  },
  'frontmatter-unsupported': {
    severity: 'error',
    summary:
      "the MCP SDK's frontmatter reader, which hosts verify SKILL.md with, refuses this frontmatter or reads it differently",
  },
  // A ref of a `refs:` source that is not served (the source serves its other refs).
  'ref-id-collision': {
    severity: 'error',
    summary:
      'two refs of a refs: source map to one source id (or to the id of another source); neither is served',
  },
  'ref-id-invalid': {
    severity: 'error',
    summary:
      'a ref of a refs: source makes no valid source id (past 64 characters, or starting or ending with "-" or ".")',
  },
  'refs-over-limit': {
    severity: 'error',
    summary: 'more refs match a refs: source than its maxRefs: the oldest are not served',
  },
  // Source errors: the source serves nothing new (a previously served commit keeps serving).
  'source-not-a-repository': { severity: 'error', summary: 'the configured path is not a git repository' },
  'source-commit-not-found': {
    severity: 'error',
    summary: 'the configured commit does not exist (or the remote will not serve it)',
  },
  'source-ref-not-found': { severity: 'error', summary: 'the configured ref does not resolve' },
  'source-ref-ambiguous': { severity: 'error', summary: 'the configured ref names both a branch and a tag' },
  'source-incomplete': {
    severity: 'error',
    summary: 'objects of the commit are missing from the repository',
  },
  'source-auth-failed': { severity: 'error', summary: 'the remote refused the credentials' },
  'source-repository-not-found': {
    severity: 'error',
    summary: 'the remote answered 404: no repository at that URL (or no access to it)',
  },
  'source-unreachable': {
    severity: 'error',
    summary: 'the remote could not be reached (connection refused, reset, no route, unknown host)',
  },
  'source-timeout': {
    severity: 'error',
    summary: 'the remote sent nothing for longer than sync.timeout, or the transfer outlasted sync.deadline',
  },
  'source-http-error': {
    severity: 'error',
    summary: 'the remote answered with an HTTP error (5xx or another unexpected status)',
  },
  'source-pack-invalid': {
    severity: 'error',
    summary: 'the remote sent an empty, truncated or corrupt pack',
  },
  'source-disk-full': {
    severity: 'error',
    summary: 'no space left (or a quota or file-size limit reached) on the device holding dataDir',
  },
  'source-too-large': {
    severity: 'error',
    summary:
      "the transfer passed sync.maxFetchBytes or sync.maxFetchObjects, git ran out of git.maxMemory, a commit, tree, tag or delta of it inflates past MAX_OBJECT_BYTES, its blobs over MAX_OBJECT_BYTES declare more than MAX_LARGE_BLOB_BYTES together, or the commit's tree lists past MAX_TREE_ENTRIES entries",
  },
  'source-insecure-redirect': {
    severity: 'error',
    summary:
      'the remote redirected from https to http (refused: credentials and content would travel in clear)',
  },
  'source-redirect-refused': {
    severity: 'error',
    summary: 'the remote redirected, and sync.redirects is refuse (or it redirected too many times)',
  },
  'source-store-damaged': {
    severity: 'error',
    summary:
      'objects of a served commit are missing from the store (or its index file is wrong): being repaired, or a repair left its reads failing',
  },
  'source-fetch-failed': {
    severity: 'error',
    summary: 'the transfer failed for another reason (see the detail)',
  },
  'source-unsupported': {
    severity: 'error',
    summary:
      'the running git backend cannot serve this source (SSH, file URLs and credential helpers need the git binary)',
  },
  'source-unsigned': {
    severity: 'error',
    summary:
      'verify is configured and the commit (or, with require: tag, the tag the ref names) carries no signature',
  },
  'source-signature-invalid': {
    severity: 'error',
    summary:
      "the signature does not verify (tampered or malformed, another namespace, an unsupported algorithm), or a signed tag's name is not the ref it was reached through",
  },
  'source-signer-unknown': {
    severity: 'error',
    summary: 'the signing key is not among the configured sshAllowedSigners or gpgKeys',
  },
  'source-signer-not-allowed': {
    severity: 'error',
    summary: 'the signing key is known but not allowed to sign git objects (allowed_signers namespaces)',
  },
  'source-signer-expired': {
    severity: 'error',
    summary:
      'the OpenPGP key has expired or was revoked, or the commit time is outside the SSH key valid-after/valid-before',
  },
  'source-lock-mismatch': {
    severity: 'error',
    summary:
      "serving a lockfile, the locked commit's tree, or a skill's path, name, file count, bytes or digest, is not what the lockfile lists",
  },
  'source-pending': {
    severity: 'error',
    summary:
      'another skillpin process on this dataDir, or the replica polling the source, syncs it and has not published it yet',
  },
  'source-internal': {
    severity: 'error',
    summary: 'an unexpected error while syncing the source (see logs)',
  },
  // Requests refused by authentication (HTTP): logged with the caller's address, never with the token.
  'auth-missing': { severity: 'error', summary: 'the request carries no bearer token (401)' },
  'auth-token-invalid': {
    severity: 'error',
    summary:
      'the bearer token is no configured token and no valid JWT (malformed, bad signature, no exp, another algorithm) (401)',
  },
  'auth-token-expired': {
    severity: 'error',
    summary: 'the JWT has expired, or is not valid yet (exp, nbf, beyond the clock skew) (401)',
  },
  'auth-issuer-mismatch': { severity: 'error', summary: 'the JWT was issued by another issuer (iss) (401)' },
  'auth-audience-mismatch': {
    severity: 'error',
    summary: 'the JWT is meant for another resource (aud is not the configured audience) (401)',
  },
  'auth-key-unknown': {
    severity: 'error',
    summary: "the JWT's signing key (kid) is not in the issuer's JWKS, even after fetching it again (401)",
  },
  'auth-issuer-unavailable': {
    severity: 'error',
    summary: "the issuer's metadata or JWKS could not be fetched or read, so no JWT can be checked (503)",
  },
  // Warnings: served, but look. Files left out of a skill are warnings on the file; the skill still serves.
  'name-mismatch': { severity: 'warning', summary: 'name differs from the folder; served under its name' },
  'duplicate-name': {
    severity: 'warning',
    summary: 'another served skill of the same commit has the same name',
  },
  'symlink-outside-skill': {
    severity: 'warning',
    summary: 'a symlink that leaves its skill (or is absolute) was left out',
  },
  'symlink-dangling': {
    severity: 'warning',
    summary: 'a symlink whose target is not in the commit was left out',
  },
  'symlink-loop': { severity: 'warning', summary: 'a symlink that loops was left out' },
  submodule: {
    severity: 'warning',
    summary: 'a submodule entry has no content in this commit and was left out',
  },
  'lfs-pointer': {
    severity: 'warning',
    summary: 'a Git LFS pointer file is served as the pointer text the commit holds, not the large file',
  },
  'file-name-invalid': {
    severity: 'warning',
    summary:
      'a file whose path holds a name that cannot be served (".", "..", ".git", a control character, a backslash or bytes that are not UTF-8) was left out',
  },
  // Scripts (skill_run): the skill and its files still serve; what is reported is what will not run.
  declaration: {
    severity: 'warning',
    summary:
      'the mcp-host: block is refused (its scripts are not declared) or holds keys this server ignores (named in the detail)',
  },
  'declared-script-missing': {
    severity: 'warning',
    summary: 'a script the mcp-host: block declares is not a file of the skill; it cannot run',
  },
  grant: {
    severity: 'warning',
    summary:
      "a run: line of the config names a skill, script or variable the skill's declaration does not have; the line grants nothing",
  },
  'interpreter-unavailable': {
    severity: 'warning',
    summary:
      'a granted script needs an interpreter this deployment does not run (not allowed, or not installed)',
  },
  'environ-unscrubbed': {
    severity: 'warning',
    summary:
      "the process's initial environment block (/proc/self/environ) could not be cleared, so no script runs (unless runs.allowUnscrubbed)",
  },
} as const satisfies Record<string, { severity: 'error' | 'warning'; summary: string }>;

export type Reason = keyof typeof REASONS;
export type Severity = 'error' | 'warning';
/** Why a whole source serves nothing new: the `source-` reasons. */
export type SourceReason = Extract<Reason, `source-${string}`>;

/** Why a request was refused by authentication: the `auth-` reasons. */
export type AuthReason = Extract<Reason, `auth-${string}`>;

export function isReason(code: string): code is Reason {
  return Object.hasOwn(REASONS, code);
}

export function isSourceReason(code: string): code is SourceReason {
  return code.startsWith('source-') && Object.hasOwn(REASONS, code);
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
  reason: Reason;
  severity: Severity;
  detail: string;
  /** The line of the file it is about (1-based): the frontmatter key, or the YAML error. */
  line?: number;
}

export function problem(path: string, reason: Reason, detail: string, line?: number): SkillProblem {
  return {
    path,
    reason,
    severity: REASONS[reason].severity,
    detail,
    ...(line === undefined ? {} : { line }),
  };
}
