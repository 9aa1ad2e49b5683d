/** What the git child may take from our environment: the user's SSH agent and keys, proxies, CA files. */
const PASSED = [
  'PATH',
  'HOME',
  'TMPDIR',
  'SYSTEMROOT',
  'SSH_AUTH_SOCK',
  'GIT_SSH',
  'GIT_SSH_COMMAND',
  'GIT_SSH_VARIANT',
  'http_proxy',
  'https_proxy',
  'HTTPS_PROXY',
  'all_proxy',
  'ALL_PROXY',
  'no_proxy',
  'NO_PROXY',
  'GIT_SSL_CAINFO',
  'GIT_SSL_CAPATH',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
];

/**
 * Configuration every git child runs with, on top of a repository's own (command scope wins over it): no hooks,
 * no fsmonitor, no background maintenance, any owner's repository readable, no credential helper but ours.
 */
const HARDENED: Array<[string, string]> = [
  ['safe.directory', '*'],
  ['core.hooksPath', '/dev/null'],
  ['core.fsmonitor', 'false'],
  ['core.askPass', ''],
  ['core.useReplaceRefs', 'false'],
  ['credential.helper', ''],
  ['gc.auto', '0'],
  ['maintenance.auto', 'false'],
  ['fetch.writeCommitGraph', 'false'],
  ['protocol.version', '2'],
];

export interface ChildSettings {
  /** Protocols the child may use (GIT_ALLOW_PROTOCOL); none for a command that needs no remote. */
  protocols?: readonly string[];
  /** More configuration, passed in the environment (GIT_CONFIG_COUNT): values may be secrets, argv is public. */
  config?: ReadonlyArray<readonly [string, string]>;
  /** More variables (secrets the credential helper reads). */
  vars?: Record<string, string>;
}

/**
 * The whole environment of a git child: nothing of the user's or the system's git configuration (a repository
 * under serve is hostile; the user's config is not ours to apply), no terminal prompt, no lazy fetch, no
 * replace refs, C locale so messages can be classified. Only PASSED variables come from `base`.
 */
export function childEnv(base: NodeJS.ProcessEnv, settings: ChildSettings = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of PASSED) {
    const value = base[name];
    if (value !== undefined) env[name] = value;
  }
  Object.assign(env, {
    LC_ALL: 'C',
    LANG: 'C',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_TERMINAL_PROMPT: '0',
    GIT_NO_LAZY_FETCH: '1',
    GIT_NO_REPLACE_OBJECTS: '1',
    GIT_PROTOCOL_FROM_USER: '0',
    GIT_ALLOW_PROTOCOL: (settings.protocols ?? []).join(':') || 'none',
    GIT_PAGER: 'cat',
    GIT_EDITOR: 'false',
    SSH_ASKPASS_REQUIRE: 'never',
  });
  // Without a command of the user's own, ssh must never stop to ask (passphrase, unknown host key).
  if (env['GIT_SSH_COMMAND'] === undefined && env['GIT_SSH'] === undefined)
    env['GIT_SSH_COMMAND'] = 'ssh -o BatchMode=yes';
  const config = [...HARDENED, ...(settings.config ?? [])];
  env['GIT_CONFIG_COUNT'] = String(config.length);
  config.forEach(([key, value], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = key;
    env[`GIT_CONFIG_VALUE_${i}`] = value;
  });
  return Object.assign(env, settings.vars);
}
