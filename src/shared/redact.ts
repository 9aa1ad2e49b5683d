/**
 * Credentials removed from text that may hold them: what a remote answered, what git printed, a URL. Logs go
 * through here (log.ts), and so does anything a remote said before it is kept. Replacements never consume a
 * `"` or `\`, so a JSON line stays JSON.
 */

/** Secrets in use, in every form they travel in: as configured, URL-encoded, inside a Basic header. */
let known: readonly string[] = [];

/** Shorter values are not looked for: they would match ordinary words. */
const MIN_SECRET_LENGTH = 6;

const PATTERNS: ReadonlyArray<[RegExp, string]> = [
  // A header's value: "Authorization: Basic eC1h…", "Proxy-Authorization: token …", "Private-Token: …".
  [
    /\b((?:proxy-)?authorization|private-token|job-token|x-api-key)(\s*[:=]\s*)[^\s"\\]+(?:[ \t]+[^\s"\\]+)?/gi,
    '$1$2***',
  ],
  // An auth scheme's credentials anywhere: "Basic eC1h…", "Bearer eyJ…".
  [/\b(Basic|Bearer)(\s+)[A-Za-z0-9._~+/=-]{6,}/g, '$1$2***'],
  // Query and form parameters that carry credentials: token=, private_token=, access_token=, password=, …
  [
    /\b((?:private_|access_|refresh_|id_|auth_)?token|password|passwd|secret|client_secret|api_?key)=[^&\s"\\]+/gi,
    '$1=***',
  ],
  // The user information of a URL: scheme://user:password@host, scheme://token@host.
  [/\b([a-z][a-z0-9+.-]*:\/\/)[^/\s@"\\]+@/gi, '$1***@'],
];

/**
 * Remembers a secret the process uses (a token, a proxy URL's password), so that `redact` removes it wherever
 * it shows up, also URL-encoded or base64-encoded in a Basic header as `username:secret`.
 */
export function rememberSecret(secret: string, username?: string): void {
  if (secret.length < MIN_SECRET_LENGTH) return;
  const forms = [secret, encodeURIComponent(secret), Buffer.from(secret).toString('base64')];
  if (username !== undefined) forms.push(Buffer.from(`${username}:${secret}`).toString('base64'));
  const next = new Set([...known, ...forms]);
  if (next.size !== known.length) known = [...next].sort((a, b) => b.length - a.length);
}

/** `text` with every remembered secret (and `more`) and anything shaped like a credential replaced by `***`. */
export function redact(text: string, more: readonly string[] = []): string {
  let clean = text;
  for (const secret of [...more, ...known])
    if (secret.length >= MIN_SECRET_LENGTH && clean.includes(secret)) clean = clean.split(secret).join('***');
  for (const [pattern, replacement] of PATTERNS) clean = clean.replace(pattern, replacement);
  return clean;
}
