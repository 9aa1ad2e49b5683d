import { rememberSecret } from '../../shared/redact.ts';
import { GitError } from '../errors.ts';
import { DEFAULT_DEADLINE_MS, DEFAULT_GIT_MEMORY_BYTES, DEFAULT_HTTP_TIMEOUT_MS } from '../limits.ts';
import type { Remote } from '../repository.ts';
import { protocolOf, redactUrl, urlOrigin } from '../url.ts';
import type { RunContext } from './classify.ts';
import type { RunOptions } from './run.ts';

/** How much longer than curl's own low-speed limit the watchdog waits before it stops a silent HTTP(S) child. */
const WATCHDOG_MARGIN_MS = 10_000;

/** Settings of the git binary shared by every repository: its path, and the proxy for HTTP(S). */
export interface CliSettings {
  git: string;
  /** More variables for every child (tests); the user's environment passes only through `childEnv`'s list. */
  vars?: Record<string, string>;
  /** git's `http.proxy`; may hold credentials (never logged). */
  proxy?: string;
  /** The git has `cat-file --batch-command` (2.36 or later): headers come from the reader's own process. */
  batchCommand?: boolean;
  /** The address space each git process may take (git.maxMemory); absent: DEFAULT_GIT_MEMORY_BYTES. */
  maxMemoryBytes?: number;
}

/**
 * How one remote is reached: the URL and credentials only in the child's environment (never in argv, which any
 * local user can read), the source's own protocol the only one allowed (an http source may be upgraded to https,
 * never the other way: curl refuses a redirect to a protocol not allowed), an idle timeout and a deadline.
 * Credentials are scoped to the source's origin: after a redirect to another origin git asks no helper of ours,
 * and curl sends no credentials to another host, port or scheme.
 */
export function transport(remote: Remote, settings: CliSettings): RunOptions & { context: RunContext } {
  const protocol = protocolOf(remote.url);
  if (protocol === undefined)
    throw new GitError('source-unsupported', `${redactUrl(remote.url)}: not an https, http, ssh or file URL`);
  const timeoutMs = remote.timeoutMs ?? DEFAULT_HTTP_TIMEOUT_MS;
  const deadlineMs = remote.deadlineMs ?? DEFAULT_DEADLINE_MS;
  const config: Array<[string, string]> = [['remote.origin.url', remote.url]];
  const vars: Record<string, string> = {};
  const secrets: string[] = [];
  const web = protocol === 'http' || protocol === 'https';
  const follow = remote.redirects !== 'refuse';
  if (web) {
    // curl gives up when fewer than 1 byte/s arrive for this long (whole seconds); the watchdog covers the rest.
    config.push(
      ['http.lowSpeedLimit', '1'],
      ['http.lowSpeedTime', String(Math.max(1, Math.ceil(timeoutMs / 1000)))],
      // git's default: only a transfer's first request follows redirects (at most 20), and the rest go where it
      // landed; `false` follows none.
      ['http.followRedirects', follow ? 'initial' : 'false'],
    );
    if (settings.proxy !== undefined) {
      config.push(['http.proxy', settings.proxy]);
      secrets.push(settings.proxy);
      rememberSecret(settings.proxy);
    }
    const origin = urlOrigin(remote.url)!;
    if (remote.token !== undefined) {
      // The token reaches git as an environment variable read by a helper scoped to the source's own origin.
      vars['SKILLPIN_GIT_TOKEN'] = remote.token;
      secrets.push(remote.token);
      rememberSecret(remote.token, 'x-access-token');
      config.push([
        `credential.${origin}.helper`,
        '!f() { test "$1" = get && printf "username=x-access-token\\npassword=%s\\n" "$SKILLPIN_GIT_TOKEN"; }; f',
      ]);
    } else if (remote.credentialHelper !== undefined)
      config.push([`credential.${origin}.helper`, remote.credentialHelper]);
  }
  // Over HTTP(S) curl watches the bytes; a child silent for longer than that (a command like ls-remote prints
  // only at its end) is stopped by the watchdog with a margin. Over SSH the watchdog is the only guard.
  const idleTimeoutMs = web ? timeoutMs + WATCHDOG_MARGIN_MS : timeoutMs;
  return {
    protocols: protocol === 'http' ? ['http', 'https'] : [protocol],
    config,
    vars,
    idleTimeoutMs,
    deadlineMs,
    context: {
      secrets,
      timeoutMs: idleTimeoutMs,
      deadlineMs,
      followRedirects: follow,
      memoryBytes: settings.maxMemoryBytes ?? DEFAULT_GIT_MEMORY_BYTES,
    },
  };
}
