/** Percent-encoding of served paths in skill:// URIs (catalog/uri.ts builds the URIs; skills/ bounds their length). */

// Characters kept as they are in a path segment (as the SDK's skills URIs do); everything else is %-encoded.
const ENCODED_IN_SEGMENT = /[^\w!$&'()*+,.:;=@[\]|~-]/gu;

export function encodeSegment(segment: string): string {
  if (segment === '.' || segment === '..') return segment.replaceAll('.', '%2E');
  return segment.replaceAll(ENCODED_IN_SEGMENT, (char) => encodeURIComponent(char));
}

/** A served path as a URI holds it: ASCII only, so its length is its size in bytes. */
export function encodePath(path: string): string {
  return path.split('/').map(encodeSegment).join('/');
}
