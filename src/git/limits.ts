/** The most one object may inflate to: a served skill is at most 16 MiB, a tree of 100,000 entries some 4 MiB. */
export const MAX_OBJECT_BYTES = 64 * 1024 * 1024;
/**
 * A blob over MAX_OBJECT_BYTES is still kept (never read: the skill holding it is refused, `too-large`, from its
 * size alone), while the blobs over MAX_OBJECT_BYTES that one transfer brings declare at most this many bytes
 * together: each is inflated once as it arrives, to hash it, so this bounds that work. Past it the transfer is
 * `source-too-large`, before the object that passes it is inflated.
 */
export const MAX_LARGE_BLOB_BYTES = 256 * 1024 * 1024;
/** Redirects followed for one request, as git (curl's CURLOPT_MAXREDIRS, set by git's http.c). */
export const MAX_REDIRECTS = 20;
/**
 * The transfer limits a caller passes none of (check, diff): the config's defaults. Past git.maxMemory git fails to
 * allocate; past a fetch limit the transfer is `source-too-large`.
 */
export {
  DEFAULT_DEADLINE_MS,
  DEFAULT_GIT_MEMORY_BYTES,
  DEFAULT_HTTP_TIMEOUT_MS,
  DEFAULT_MAX_FETCH_BYTES,
  DEFAULT_MAX_FETCH_OBJECTS,
} from '../config/rules.ts';
/** A symlink's target longer than this resolves nowhere (PATH_MAX): its blob is not read. */
export const MAX_SYMLINK_TARGET_BYTES = 4096;
/**
 * The most entries (files, symlinks, submodules; not folders) one commit's tree may hold: a walk stops past it
 * (`source-too-large`), so a repository of repeated subtrees cannot list into millions of paths.
 */
export const MAX_TREE_ENTRIES = 1_000_000;
/** The most bytes a listing of one commit's tree (`git ls-tree -r`) may print: past it git is stopped. */
export const MAX_TREE_LISTING_BYTES = 256 * 1024 * 1024;
/** Reads in flight through one `git cat-file --batch` (its answers stream in order; memory is one object). */
export const CLI_READ_AHEAD = 512;
/** Bytes of one ref advertisement (`info/refs`) the isomorphic backend reads: some 250,000 refs. */
export const MAX_REF_LISTING_BYTES = 16 * 1024 * 1024;
/** A local git command (no remote: rev-parse, ls-tree, update-ref) still running this long is killed. */
export const LOCAL_DEADLINE_MS = 10 * 60 * 1000;
