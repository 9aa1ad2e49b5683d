/**
 * skill://<source-id>/<commit-40-hex>/<served path>: one namespace per repo@commit; the commit is always the full
 * 40-hex id, so a URI names exact bytes for ever, and the rest is the path in the repository.
 * Parsing is strict and done on the raw string: no dot segments (written or percent-encoded), no
 * backslash, NUL, query or fragment, and every segment is percent-decoded exactly once.
 */

import { COMMIT_PATTERN, SOURCE_ID_PATTERN, URI_SCHEME } from '../shared/patterns.ts';
import { encodePath } from '../shared/uriPath.ts';
import { join, SKILL_MD } from '../skills/index.ts';

export { encodePath, encodeSegment } from '../shared/uriPath.ts';

export const SCHEME = URI_SCHEME;

/** The URI of `path` (a served path, '' for the namespace root) in the namespace of `source` at `commit`. */
export function namespaceUri(source: string, commit: string, path = ''): string {
  return path === '' ? `${SCHEME}${source}/${commit}` : `${SCHEME}${source}/${commit}/${encodePath(path)}`;
}

/** The URI of the SKILL.md of the skill served at `servedDir`. */
export function skillMdUri(source: string, commit: string, servedDir: string): string {
  return namespaceUri(source, commit, join(servedDir, SKILL_MD));
}

/** The URI of the file `relPath` (relative to its skill's folder) of the skill served at `servedDir`. */
export function skillFileUri(source: string, commit: string, servedDir: string, relPath: string): string {
  return namespaceUri(source, commit, join(servedDir, relPath));
}

/** `uri` is the canonical form of the request URI: the key every served URI is looked up by. */
export type ParsedUri =
  | { ok: true; source: string; commit: string; path: string; uri: string }
  | { ok: false; problem: string };

const invalid = (problem: string): ParsedUri => ({ ok: false, problem });

/** The source id of a URI that parseSkillUri accepted: its authority, read without parsing the URI again. */
export function sourceIdOf(uri: string): string {
  const end = uri.indexOf('/', SCHEME.length);
  return uri.slice(SCHEME.length, end === -1 ? undefined : end);
}

/** Parses a request URI. `path` is the decoded served path ('' for the namespace root). */
export function parseSkillUri(uri: string): ParsedUri {
  if (!uri.startsWith(SCHEME)) return invalid(`only ${SCHEME} URIs are served`);
  if (/[?#]/.test(uri)) return invalid('a query or fragment is not allowed');
  if (uri.includes('\\')) return invalid('a backslash is not allowed');
  const [source = '', commit, ...segments] = uri.slice(SCHEME.length).split('/');
  if (!SOURCE_ID_PATTERN.test(source)) return invalid('the authority is not a configured source id');
  if (commit === undefined) return invalid('the URI names no commit');
  if (!COMMIT_PATTERN.test(commit)) return invalid('the second segment must be a full 40-hex commit');
  const decoded: string[] = [];
  for (const raw of segments) {
    let segment: string;
    try {
      segment = decodeURIComponent(raw);
    } catch {
      return invalid('a segment has a malformed percent-escape');
    }
    if (segment === '') return invalid('empty path segments are not allowed');
    if (segment === '.' || segment === '..') return invalid('dot segments are not allowed');
    if (/[/\\\u0000]/.test(segment)) return invalid('a segment decodes to "/", "\\" or NUL');
    decoded.push(segment);
  }
  const path = decoded.join('/');
  return { ok: true, source, commit, path, uri: namespaceUri(source, commit, path) };
}
