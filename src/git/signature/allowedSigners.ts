import { sshKeyType } from './sshsig.ts';

/** One line of an allowed signers file (ssh-keygen(1) "ALLOWED SIGNERS", git's gpg.ssh.allowedSignersFile). */
export interface AllowedSigner {
  /** The principals as written (comma-separated patterns): what a verified signature is reported as. */
  principals: string;
  /** The public key in SSH wire encoding. */
  publicKey: Buffer;
  /** The line is a certificate authority: it vouches for certificates, never for a plain key. */
  certAuthority: boolean;
  /** `namespaces="…"`: the pattern list of namespaces the key may sign in; absent: every namespace. */
  namespaces?: string;
  /** `valid-after` / `valid-before`, milliseconds since the epoch. */
  validAfter?: number;
  validBefore?: number;
}

/** A line of the file that is not a signer; `line` counts from 1. */
export class AllowedSignersError extends Error {
  constructor(
    readonly line: number,
    detail: string,
  ) {
    super(`line ${line}: ${detail}`);
    this.name = 'AllowedSignersError';
  }
}

/** Splits at white space outside double quotes (principals and option values may be quoted). */
function fields(text: string): string[] {
  return text.match(/(?:"[^"]*"|[^\s"])+/g) ?? [];
}

/** `YYYYMMDD[HHMM[SS]][Z]`: UTC with `Z`, else local time, as ssh-keygen reads it. */
function timestamp(text: string, line: number): number {
  const match = /^(\d{4})(\d\d)(\d\d)(?:(\d\d)(\d\d)(\d\d)?)?(Z?)$/.exec(text);
  if (match === null) throw new AllowedSignersError(line, `"${text}" is not a YYYYMMDD[HHMM[SS]][Z] time`);
  const [y, mo, d, h = '0', mi = '0', s = '0'] = match.slice(1, 7).map((part) => part ?? '0');
  const parts = [Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s)] as const;
  return match[7] === 'Z' ? Date.UTC(...parts) : new Date(...parts).getTime();
}

const unquote = (text: string) => text.replace(/^"(.*)"$/, '$1');

function options(text: string, line: number): Omit<AllowedSigner, 'principals' | 'publicKey'> {
  const found: Omit<AllowedSigner, 'principals' | 'publicKey'> = { certAuthority: false };
  for (const option of text.match(/(?:"[^"]*"|[^,"])+/g) ?? []) {
    const [name = '', ...rest] = option.split('=');
    const value = unquote(rest.join('='));
    const key = name.toLowerCase();
    if (key === 'cert-authority' && rest.length === 0) found.certAuthority = true;
    else if (key === 'namespaces' && rest.length > 0) found.namespaces = value;
    else if (key === 'valid-after' && rest.length > 0) found.validAfter = timestamp(value, line);
    else if (key === 'valid-before' && rest.length > 0) found.validBefore = timestamp(value, line);
    else throw new AllowedSignersError(line, `unknown option "${option}"`);
  }
  return found;
}

/** Parses an allowed signers file; a line that is not a signer throws, naming the line. */
export function parseAllowedSigners(text: string): AllowedSigner[] {
  const signers: AllowedSigner[] = [];
  text.split('\n').forEach((raw, index) => {
    const line = index + 1;
    const trimmed = raw.trim();
    if (trimmed === '' || trimmed.startsWith('#')) return;
    const [principals, ...rest] = fields(trimmed);
    // The key type follows the principals, or the options when the next field is not a key type.
    const keyAt = rest.findIndex((field) => /^(?:ssh-|ecdsa-|sk-)[a-z0-9@.-]+$/.test(field));
    if (principals === undefined || keyAt === -1 || keyAt > 1 || rest[keyAt + 1] === undefined)
      throw new AllowedSignersError(line, 'expected "principals [options] keytype base64-key [comment]"');
    const type = rest[keyAt]!;
    const encoded = rest[keyAt + 1]!;
    const publicKey = Buffer.from(encoded, 'base64');
    let inner: string | undefined;
    try {
      inner = publicKey.toString('base64') === encoded ? sshKeyType(publicKey) : undefined;
    } catch {
      inner = undefined;
    }
    if (inner !== type) throw new AllowedSignersError(line, `the key is not a valid ${type} public key`);
    signers.push({
      principals: unquote(principals),
      publicKey,
      ...(keyAt === 1 ? options(rest[0]!, line) : { certAuthority: false }),
    });
  });
  return signers;
}

/** OpenSSH's match_pattern_list: comma-separated `*`/`?` patterns, a `!` pattern that matches refuses. */
export function matchesPatternList(value: string, list: string): boolean {
  let matched = false;
  for (const raw of list.split(',')) {
    const negated = raw.startsWith('!');
    const pattern = negated ? raw.slice(1) : raw;
    const regex = new RegExp(
      `^${pattern
        .replace(/[.+^${}()|[\]\\]/g, '\\$&')
        .replace(/\*/g, '.*')
        .replace(/\?/g, '.')}$`,
    );
    if (!regex.test(value)) continue;
    if (negated) return false;
    matched = true;
  }
  return matched;
}
