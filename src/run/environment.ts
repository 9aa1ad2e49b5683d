import { compareText } from '../shared/text.ts';

/** What every script gets from the server's environment, when set: an allowlist; nothing else passes. */
export const FIXED_ENV = ['PATH', 'HOME', 'LANG', 'TZ', 'TMPDIR'] as const;
export interface ScriptEnvironment {
  /** Exactly what the script's process gets. */
  env: Record<string, string>;
  /** Its names, sorted: what the preview shows. */
  names: string[];
  /** Granted variables the server's environment does not set: the script does not get them. */
  notSet: string[];
}

/**
 * The environment of a script: the fixed allowlist, and the `granted` variables (each granted by the owner and
 * declared by the script) that are set; nothing else of `from`. Proxy variables too pass only when granted: they
 * may carry the proxy's credentials.
 * The preview and the run both call this, so the names a person approves are the names the script gets.
 */
export function scriptEnvironment(granted: readonly string[], from: NodeJS.ProcessEnv): ScriptEnvironment {
  // Own properties only, collected as entries: a name like "__proto__" stays a name.
  const lookup = (name: string) => (Object.hasOwn(from, name) ? from[name] : undefined);
  const entries = new Map<string, string>();
  const notSet = new Set<string>();
  for (const name of [...FIXED_ENV, ...granted]) {
    const value = lookup(name);
    if (value !== undefined) entries.set(name, value);
    else if (granted.includes(name)) notSet.add(name);
  }
  return {
    env: Object.fromEntries(entries),
    names: [...entries.keys()].sort(compareText),
    notSet: [...notSet].sort(compareText),
  };
}
