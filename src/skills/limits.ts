/** Spec §Limits: at most 512 resources per skill, SKILL.md and nested skills' files included. */
export const MAX_SKILL_FILES = 512;
/** Spec §Limits: at most 16 MiB summed over a skill's resources. */
export const MAX_SKILL_BYTES = 16 * 1024 * 1024;
/**
 * What the skills of one commit may list in all, nested skills listing their files again: each listed file counts
 * its path's length plus LISTED_FILE_COST. Past it the commit is not indexed (a tree of nested skills can
 * otherwise make lists quadratic in its depth).
 */
export const MAX_LISTED_BYTES = 64 * 1024 * 1024;
/** What one listed file costs besides its path, about the memory of its record. */
export const LISTED_FILE_COST = 64;
/**
 * A served file's URI is at most this many bytes (URIs are ASCII): a 2026-07-28 client sends the URI it reads in the
 * `mcp-name` header, and HTTP servers and proxies refuse long headers (Node: 16 KiB for all of them, nginx: 8 KiB a
 * line). Counted with the longest source id, so whether a skill is served does not depend on its source's id.
 */
export const MAX_URI_BYTES = 4096;
/** Frontmatter larger than this is refused before YAML parsing (a bound on parser work). */
export const MAX_FRONTMATTER_BYTES = 64 * 1024;
/** Agent Skills: name is 1-64 characters. */
export const MAX_NAME_LENGTH = 64;
/** Agent Skills: description is 1-1024 characters. */
export const MAX_DESCRIPTION_LENGTH = 1024;
/** Agent Skills: compatibility is at most 500 characters. */
export const MAX_COMPATIBILITY_LENGTH = 500;
/** Symlink chains longer than this are reported as loops. */
export const MAX_SYMLINK_HOPS = 8;
/** Git LFS pointer files are small text files; larger blobs are never taken for one. */
export const MAX_LFS_POINTER_BYTES = 1024;
