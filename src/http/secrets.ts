import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();

/** Equal, compared in constant time over both sides' SHA-256, so not even the secret's length leaks. */
export function sameSecret(given: string, expected: string): boolean {
  return timingSafeEqual(digest(given), digest(expected));
}

/**
 * Which of `secrets` `given` is, or -1: its SHA-256 compared in constant time with every secret's (hashed once,
 * here), so neither which one matched nor any one's length shows in the time.
 */
export function secretMatcher(secrets: readonly string[]): (given: string) => number {
  const digests = secrets.map(digest);
  return (given) => {
    const mine = digest(given);
    let found = -1;
    for (const [index, expected] of digests.entries()) if (timingSafeEqual(mine, expected)) found = index;
    return found;
  };
}

/** GitHub's `X-Hub-Signature-256` of exactly these bytes: `sha256=` + HMAC-SHA256 in hex. */
export function githubSignature(secret: string, body: Uint8Array): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}
