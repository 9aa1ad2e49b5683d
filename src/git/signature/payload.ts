/** A signed object split as git splits it: the bytes that were signed, and the armored signature. */
export interface SignedPayload {
  payload: Buffer;
  signature: string;
}

/** Lines that open a signature block, as git's gpg-interface knows them (OpenPGP, SSH, X.509). */
const SIGNATURE_START = [
  '-----BEGIN PGP SIGNATURE-----',
  '-----BEGIN PGP MESSAGE-----',
  '-----BEGIN SSH SIGNATURE-----',
  '-----BEGIN SIGNED MESSAGE-----',
];

/**
 * A commit's `gpgsig` header and the commit without it (git's parse_buffer_signed_by_header for SHA-1 objects):
 * every `gpgsig*` header and its continuation lines leave the payload; only `gpgsig` holds our signature.
 * `undefined` when the commit is unsigned.
 */
export function commitSignature(data: Buffer): SignedPayload | undefined {
  const end = data.indexOf('\n\n');
  const headerEnd = end === -1 ? data.length : end + 1;
  const kept: Buffer[] = [];
  const signature: string[] = [];
  let inHeader: 'ours' | 'other' | undefined;
  let at = 0;
  while (at < headerEnd) {
    const newline = data.indexOf(0x0a, at);
    const next = newline === -1 || newline >= headerEnd ? headerEnd : newline + 1;
    const line = data.subarray(at, next);
    if (inHeader !== undefined && line[0] === 0x20) {
      if (inHeader === 'ours') signature.push(line.toString('latin1', 1));
    } else if (line.toString('latin1', 0, 7) === 'gpgsig ') {
      inHeader = 'ours';
      signature.push(line.toString('latin1', 7));
    } else if (line.toString('latin1', 0, 6) === 'gpgsig') {
      inHeader = 'other';
    } else {
      inHeader = undefined;
      kept.push(line);
    }
    at = next;
  }
  if (signature.length === 0) return undefined;
  kept.push(data.subarray(headerEnd));
  return { payload: Buffer.concat(kept), signature: signature.join('') };
}

/**
 * An annotated tag's signature: the last block opened by a signature line, up to the end (git's
 * parse_signed_buffer); the payload is everything before it. `undefined` when the tag is unsigned.
 */
export function tagSignature(data: Buffer): SignedPayload | undefined {
  let start = -1;
  for (let at = 0; at < data.length; ) {
    const newline = data.indexOf(0x0a, at);
    const next = newline === -1 ? data.length : newline + 1;
    const line = data.toString('latin1', at, Math.min(next, at + 40));
    if (SIGNATURE_START.some((marker) => line.startsWith(marker))) start = at;
    at = next;
  }
  if (start === -1) return undefined;
  return { payload: data.subarray(0, start), signature: data.toString('latin1', start) };
}
