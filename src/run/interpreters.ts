import { accessSync, constants, statSync } from 'node:fs';
import path from 'node:path';
import { KNOWN_INTERPRETERS, type Interpreter } from '../skills/index.ts';

export type Availability = { ok: true; path: string } | { ok: false; detail: string };

/** Which interpreter a declared name runs here: from a fixed set, never from an extension or a shebang. */
export type Interpreters = (name: string) => Availability;

/** An executable regular file named `name` in a folder of `PATH` (absolute folders only), or `undefined`. */
export function findOnPath(name: string, searchPath: string | undefined): string | undefined {
  for (const dir of (searchPath ?? '').split(path.delimiter)) {
    if (!path.isAbsolute(dir)) continue;
    const candidate = path.join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // Not here: the next folder.
    }
  }
  return undefined;
}

/**
 * The interpreters of this deployment, decided once: `node` is the Node running skillpin, `python3` the first
 * on the server's PATH; each only when the config allows it.
 */
export function interpretersOf(allowed: readonly Interpreter[], env: NodeJS.ProcessEnv): Interpreters {
  const found = new Map<string, Availability>();
  for (const name of KNOWN_INTERPRETERS) {
    if (!allowed.includes(name)) {
      found.set(name, {
        ok: false,
        detail: `${name} is not allowed here (runs.interpreters: [${allowed.join(', ')}])`,
      });
      continue;
    }
    const where = name === 'node' ? process.execPath : findOnPath(name, env['PATH']);
    found.set(
      name,
      where === undefined
        ? { ok: false, detail: `${name} is allowed but not found on the server's PATH` }
        : { ok: true, path: where },
    );
  }
  return (name) =>
    found.get(name) ?? {
      ok: false,
      detail: `${name} is not an interpreter skillpin runs (${KNOWN_INTERPRETERS.join(', ')})`,
    };
}
