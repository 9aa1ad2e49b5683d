import { constants, createHash, createPublicKey, type KeyObject, verify } from 'node:crypto';
import { GitError } from '../errors.ts';

/** SSHSIG (OpenSSH PROTOCOL.sshsig): what `ssh-keygen -Y sign` writes and git stores with `gpg.format=ssh`. */
const MAGIC = Buffer.from('SSHSIG');
const ARMOR = /^-----BEGIN SSH SIGNATURE-----\r?\n([A-Za-z0-9+/=\s]+?)\r?\n-----END SSH SIGNATURE-----\s*$/;
/** OpenSSH's SSH_RSA_MINIMUM_MODULUS_SIZE. */
const MIN_RSA_BITS = 1024;

const invalid = (detail: string) => new GitError('source-signature-invalid', detail);

/** Reads SSH wire encoding (RFC 4251 §5) from hostile bytes: every length is checked against what is there. */
class WireReader {
  private at = 0;
  constructor(private readonly data: Buffer) {}
  uint32(): number {
    if (this.at + 4 > this.data.length) throw invalid('the SSH signature is truncated');
    const value = this.data.readUInt32BE(this.at);
    this.at += 4;
    return value;
  }
  bytes(): Buffer {
    const length = this.uint32();
    if (this.at + length > this.data.length) throw invalid('the SSH signature is truncated');
    const value = this.data.subarray(this.at, this.at + length);
    this.at += length;
    return value;
  }
  text(): string {
    return this.bytes().toString('latin1');
  }
  /** An mpint as unsigned big-endian bytes, leading zeros dropped. */
  unsigned(): Buffer {
    const value = this.bytes();
    let start = 0;
    while (start < value.length - 1 && value[start] === 0) start++;
    return value.subarray(start);
  }
  end(what: string): void {
    if (this.at !== this.data.length) throw invalid(`${what} has trailing bytes`);
  }
}

const wireString = (value: Buffer | string) => {
  const bytes = typeof value === 'string' ? Buffer.from(value) : value;
  const length = Buffer.alloc(4);
  length.writeUInt32BE(bytes.length);
  return Buffer.concat([length, bytes]);
};

export interface SshSignature {
  /** The signer's public key, in SSH wire encoding (what allowed_signers lines hold, base64-decoded). */
  publicKey: Buffer;
  namespace: string;
  reserved: Buffer;
  hashAlgorithm: string;
  /** The signature blob: its algorithm name, then the signature bytes. */
  signature: Buffer;
}

/** Parses an armored SSHSIG; `source-signature-invalid` when it is not one. */
export function parseSshSignature(armored: string): SshSignature {
  const body = ARMOR.exec(armored.trim())?.[1];
  if (body === undefined) throw invalid('the signature is not an armored SSH signature');
  const blob = Buffer.from(body.replace(/\s+/g, ''), 'base64');
  if (blob.subarray(0, MAGIC.length).compare(MAGIC) !== 0)
    throw invalid('the SSH signature lacks SSHSIG magic');
  const reader = new WireReader(blob.subarray(MAGIC.length));
  const version = reader.uint32();
  if (version !== 1) throw invalid(`SSH signature version ${version} is not supported`);
  const parsed: SshSignature = {
    publicKey: reader.bytes(),
    namespace: reader.text(),
    reserved: reader.bytes(),
    hashAlgorithm: reader.text(),
    signature: reader.bytes(),
  };
  reader.end('the SSH signature');
  return parsed;
}

/** `SHA256:<base64>` of a key blob, as `ssh-keygen -l` prints it. */
export function sshFingerprint(publicKey: Buffer): string {
  return `SHA256:${createHash('sha256').update(publicKey).digest('base64').replace(/=+$/, '')}`;
}

/** The key type named inside a public key blob (`ssh-ed25519`, `ecdsa-sha2-nistp256`, `ssh-rsa`, …). */
export function sshKeyType(publicKey: Buffer): string {
  return new WireReader(publicKey).text();
}

const CURVES: Record<string, { crv: string; hash: string; bytes: number }> = {
  nistp256: { crv: 'P-256', hash: 'sha256', bytes: 32 },
  nistp384: { crv: 'P-384', hash: 'sha384', bytes: 48 },
  nistp521: { crv: 'P-521', hash: 'sha512', bytes: 66 },
};

interface Verifier {
  key: KeyObject;
  /** Checks `signature` (the blob after its algorithm name) over `data`, for algorithm `algorithm`. */
  check(algorithm: string, data: Buffer, signature: Buffer): boolean;
}

/** A public key blob as a node:crypto key, with the signature algorithms it may sign with. */
function verifierOf(publicKey: Buffer): Verifier {
  const reader = new WireReader(publicKey);
  const type = reader.text();
  const jwk = (fields: Record<string, string>) => createPublicKey({ key: fields, format: 'jwk' });
  if (type === 'ssh-ed25519') {
    const x = reader.bytes();
    reader.end('the public key');
    if (x.length !== 32) throw invalid('the ed25519 public key is not 32 bytes');
    const key = jwk({ kty: 'OKP', crv: 'Ed25519', x: x.toString('base64url') });
    return { key, check: (alg, data, sig) => alg === type && verify(null, data, key, sig) };
  }
  const curve = /^ecdsa-sha2-(nistp256|nistp384|nistp521)$/.exec(type)?.[1];
  if (curve !== undefined) {
    const { crv, hash, bytes } = CURVES[curve]!;
    if (reader.text() !== curve) throw invalid('the ECDSA public key names another curve');
    const point = reader.bytes();
    reader.end('the public key');
    if (point.length !== 1 + 2 * bytes || point[0] !== 0x04)
      throw invalid('the ECDSA public key is not an uncompressed point');
    const key = jwk({
      kty: 'EC',
      crv,
      x: point.subarray(1, 1 + bytes).toString('base64url'),
      y: point.subarray(1 + bytes).toString('base64url'),
    });
    return {
      key,
      check(alg, data, sig) {
        if (alg !== type) return false;
        // RFC 5656 §3.1.2: the blob holds mpint r and mpint s; node takes them as r‖s of the curve's size.
        const parts = new WireReader(sig);
        const [r, s] = [parts.unsigned(), parts.unsigned()];
        parts.end('the ECDSA signature');
        if (r.length > bytes || s.length > bytes) return false;
        const fixed = Buffer.alloc(2 * bytes);
        r.copy(fixed, bytes - r.length);
        s.copy(fixed, 2 * bytes - s.length);
        return verify(hash, data, { key, dsaEncoding: 'ieee-p1363' }, fixed);
      },
    };
  }
  if (type === 'ssh-rsa') {
    const e = reader.unsigned();
    const n = reader.unsigned();
    reader.end('the public key');
    if (n.length * 8 < MIN_RSA_BITS) throw invalid(`the RSA key is shorter than ${MIN_RSA_BITS} bits`);
    const key = jwk({ kty: 'RSA', n: n.toString('base64url'), e: e.toString('base64url') });
    // PROTOCOL.sshsig: RSA signs with rsa-sha2-256 or rsa-sha2-512, never SHA-1 ssh-rsa.
    const hashes: Record<string, string> = { 'rsa-sha2-256': 'sha256', 'rsa-sha2-512': 'sha512' };
    return {
      key,
      check: (alg, data, sig) =>
        hashes[alg] !== undefined &&
        verify(hashes[alg], data, { key, padding: constants.RSA_PKCS1_PADDING }, sig),
    };
  }
  throw invalid(`SSH keys of type ${type} are not supported (ed25519, ECDSA and RSA are)`);
}

/**
 * Checks that `signature` signs `message` in `namespace` with the key it carries. Which keys may sign is
 * decided by the caller (allowed_signers); this only proves the bytes. Throws `source-signature-invalid`.
 */
export function verifySshSignature(signature: SshSignature, message: Buffer, namespace: string): void {
  if (signature.namespace !== namespace)
    throw invalid(`the SSH signature is for namespace "${signature.namespace}", not "${namespace}"`);
  const hash = signature.hashAlgorithm;
  if (hash !== 'sha256' && hash !== 'sha512')
    throw invalid(`the SSH signature hashes with ${hash}; only sha256 and sha512 are allowed`);
  const verifier = verifierOf(signature.publicKey);
  const blob = new WireReader(signature.signature);
  const algorithm = blob.text();
  const bytes = blob.bytes();
  blob.end('the signature blob');
  const signed = Buffer.concat([
    MAGIC,
    wireString(signature.namespace),
    wireString(signature.reserved),
    wireString(hash),
    wireString(createHash(hash).update(message).digest()),
  ]);
  let good: boolean;
  try {
    good = verifier.check(algorithm, signed, bytes);
  } catch {
    good = false;
  }
  if (!good) throw invalid(`the SSH signature (${algorithm}) does not match the signed bytes`);
}
