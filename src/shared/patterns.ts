/** RFC 3986 reg-name as DESIGN.md narrows it: lowercase letters, digits, `-` and `.`; a valid URI authority. */
export const SOURCE_ID_PATTERN = /^[a-z0-9](?:[a-z0-9.-]{0,62}[a-z0-9])?$/;
/** A full commit id: the URI names exact bytes, forever. */
export const COMMIT_PATTERN = /^[0-9a-f]{40}$/;
