/** `user@host:path`, git's scp-like syntax for SSH (no `://`, a colon before any slash). */
const SCP_LIKE = /^(?:([A-Za-z0-9._~-]+)@)?(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9][A-Za-z0-9.-]*):(?!\/\/)(.+)$/;

/** The transport a remote URL uses, as git's `protocol.allow` names it; `undefined` for one we do not allow. */
export function protocolOf(url: string): 'https' | 'http' | 'ssh' | 'file' | undefined {
  if (SCP_LIKE.test(url) && !url.includes('://')) return 'ssh';
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(url)?.[1]?.toLowerCase();
  return scheme === 'https' || scheme === 'http' || scheme === 'ssh' || scheme === 'file'
    ? scheme
    : undefined;
}

/** `scheme://host[:port]` of an HTTP(S) URL: what credentials are scoped to. */
export function urlOrigin(url: string): string | undefined {
  return URL.canParse(url) ? new URL(url).origin : undefined;
}

/** `url` without password, query or fragment (and without a user name for HTTP): safe for logs, errors and `_meta`. */
export function redactUrl(url: string): string {
  const scp = SCP_LIKE.exec(url);
  if (scp !== null && !url.includes('://')) return url;
  try {
    const parsed = new URL(url);
    if (parsed.protocol !== 'ssh:') parsed.username = '';
    parsed.password = '';
    parsed.search = '';
    parsed.hash = '';
    return parsed.href;
  } catch {
    return '(invalid URL)';
  }
}
