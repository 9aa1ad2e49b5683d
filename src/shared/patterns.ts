/** An RFC 3986 reg-name narrowed to lowercase letters, digits, `-` and `.` (no `@` or `:`): a valid URI authority. */
export const SOURCE_ID_PATTERN = /^[a-z0-9](?:[a-z0-9.-]{0,62}[a-z0-9])?$/;
/** The longest source id SOURCE_ID_PATTERN allows. */
export const MAX_SOURCE_ID_LENGTH = 64;
/** skill://<source-id>/<commit>/<served path>: the full 40-hex commit, then the path in the repository. */
export const URI_SCHEME = 'skill://';
/** A full commit id: the URI names exact bytes, forever. */
export const COMMIT_PATTERN = /^[0-9a-f]{40}$/;
