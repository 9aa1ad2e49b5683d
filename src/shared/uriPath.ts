/** Percent-encoding of served paths in skill:// URIs (catalog/uri.ts builds the URIs; skills/ bounds their length). */

// Characters kept as they are in a path segment (as the SDK's skills URIs do); everything else is %-encoded.
const ENCODED_IN_SEGMENT = /[^\w!$&'()*+,.:;=@[\]|~-]/gu;

export function encodeSegment(segment: string): string {
  if (segment === '.' || segment === '..') return segment.replaceAll('.', '%2E');
  return segment.replaceAll(ENCODED_IN_SEGMENT, (char) => encodeURIComponent(char));
}

// A path every character of which is kept, and no segment of which is a dot segment, is its own encoding (most are:
// a listing encodes every file's path of every entry).
const KEPT_PATH = /^[\w!$&'()*+,.:;=@[\]|~/-]*$/;
const DOT_SEGMENT = /(^|\/)\.\.?(\/|$)/;

/** A served path as a URI holds it: ASCII only, so its length is its size in bytes. */
export function encodePath(path: string): string {
  if (KEPT_PATH.test(path) && !DOT_SEGMENT.test(path)) return path;
  return path.split('/').map(encodeSegment).join('/');
}
