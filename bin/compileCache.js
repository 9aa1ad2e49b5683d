// V8's code cache for dist/cli.cjs, which bin/skillpin.js loads through it. Node 20 keeps no compiled code between
// runs (module.enableCompileCache is Node 22's), and every stdio host starts a process per window: compiling the
// bundle, and each function the first time it runs, was a third of a start. A run compiles the file with the code
// a run before it left, then, if there was none or V8 refused it, leaves its own when it exits. V8 checks what it
// is given (its version, its flags, the source's length) and compiles afresh when it refuses it.
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import path from 'node:path';
import vm from 'node:vm';

/** How far V8 may grow a serving process's heap (src/shared/heapGrowth.ts, which a test holds this to). */
const SERVE_HEAP_FLAG = '--heap-growing-percent=50';
const OWN_HEAP_SETTING = /--heap[-_]growing[-_]percent\b/;
/** What makes a run not serve: a command other than `serve` (src/cli.ts's, which a test holds this to), or help. */
export const OTHER_COMMANDS = [
  'sync',
  'check',
  'lock',
  'update',
  'diff',
  'verify',
  'init',
  'reload',
  'status',
];
const NOT_SERVING = new Set([...OTHER_COMMANDS, 'help', '-V', '--version', '-h', '--help']);

/**
 * The V8 flags a run of `args` sets before compiling: serving bounds its heap growth (src/shared/heapGrowth.ts sets
 * the same again), and V8 accepts a code cache only under the flags it was written with, so the flag is set before
 * the bundle is compiled, not after. `serve` is the default command: a run serves unless it names another command
 * (after the options of all commands, or first) or asks for help or the version. A serving run whose option value
 * is a command's name (`--config status`) is taken for another: it bounds its heap after compiling, as it did
 * before this file, and its cache is refused by the next run, which writes its own; what it does is the same.
 * @param {readonly string[]} args what follows the script
 * @param {readonly string[]} execArgv node's own options
 * @returns {{ serving: boolean, flags: string[] }}
 */
export function flagsBeforeCompile(args, execArgv) {
  const serving = !args.some((arg) => NOT_SERVING.has(arg));
  const own = execArgv.some((arg) => OWN_HEAP_SETTING.test(arg));
  return { serving, flags: serving && !own ? [SERVE_HEAP_FLAG] : [] };
}

/**
 * Where code caches go: SKILLPIN_COMPILE_CACHE (a folder, or `off`), else skillpin/compile in the user's cache
 * folder (XDG_CACHE_HOME, %LOCALAPPDATA% on Windows, ~/.cache).
 * @param {NodeJS.ProcessEnv} env
 * @returns {string | undefined} undefined when turned off
 */
export function cacheDir(env = process.env) {
  const setting = env.SKILLPIN_COMPILE_CACHE;
  if (setting === 'off' || setting === '0') return undefined;
  if (setting) return path.resolve(setting);
  const base =
    env.XDG_CACHE_HOME ||
    (process.platform === 'win32' ? env.LOCALAPPDATA : undefined) ||
    path.join(homedir(), '.cache');
  return path.join(base, 'skillpin', 'compile');
}

/**
 * `dir`, created if missing, when only this user can write it: code in it runs as this process. Undefined otherwise
 * (the bundle is then compiled as if there were no cache).
 * @param {string} dir
 */
function ownFolder(dir) {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const stat = statSync(dir);
    if (process.getuid !== undefined && (stat.uid !== process.getuid() || (stat.mode & 0o022) !== 0))
      return undefined;
    return dir;
  } catch {
    return undefined;
  }
}

const digest = (/** @type {unknown} */ value) =>
  createHash('sha256').update(JSON.stringify(value)).digest('hex').slice(0, 16);

/**
 * Loads the CommonJS `file` as `require` would, compiled with the code cache in `dir` when there is one V8 accepts
 * (and as `require` does, with no cache, when node maps stacks through source maps).
 * `save()` writes this run's when there was none or V8 refused it (bin/skillpin.js calls it as the process exits,
 * when every function the run used is compiled); it never throws, and a run that cannot write leaves none.
 * A cache file is named after what decides whether it fits: the file's real path, node's version, platform and
 * options, the flags set before compiling (`kind`), and the file's size, time and inode; writing one removes the
 * caches of earlier builds of the same file under the same options.
 * @param {string} file
 * @param {{ dir: string | undefined, kind: string }} options
 * @returns {{ exports: any, cache: 'off' | 'miss' | 'hit' | 'rejected', save(): string | undefined }}
 */
export function requireCached(file, { dir, kind }) {
  const real = path.resolve(file);
  // Node maps stacks through source maps only for what it compiles itself (`node --enable-source-maps`).
  if (process.sourceMapsEnabled)
    return { exports: createRequire(import.meta.url)(real), cache: 'off', save: () => undefined };
  const source = readFileSync(real, 'utf8');
  const stat = statSync(real);
  const folder = dir === undefined ? undefined : ownFolder(dir);
  const family = digest([
    real,
    process.version,
    process.platform,
    process.arch,
    process.execArgv,
    process.env.NODE_OPTIONS ?? '',
    kind,
  ]);
  const cacheFile =
    folder === undefined
      ? undefined
      : path.join(folder, `${family}-${digest([stat.size, stat.mtimeMs, stat.ino])}.v8`);
  let cachedData;
  if (cacheFile !== undefined) {
    try {
      cachedData = readFileSync(cacheFile);
    } catch {
      cachedData = undefined;
    }
  }
  const script = new vm.Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, {
    filename: real,
    cachedData,
  });
  const cache =
    cacheFile === undefined
      ? 'off'
      : cachedData === undefined
        ? 'miss'
        : script.cachedDataRejected
          ? 'rejected'
          : 'hit';
  const module = { exports: {}, filename: real, id: real, loaded: false };
  script
    .runInThisContext()
    .call(module.exports, module.exports, createRequire(real), module, real, path.dirname(real));
  module.loaded = true;
  let saved = cache === 'off' || cache === 'hit';
  return {
    exports: module.exports,
    cache,
    save() {
      if (saved || cacheFile === undefined) return undefined;
      saved = true;
      const partial = `${cacheFile}.${process.pid}.tmp`;
      try {
        writeFileSync(partial, script.createCachedData(), { mode: 0o600 });
        renameSync(partial, cacheFile);
        for (const name of readdirSync(folder))
          if (name.startsWith(`${family}-`) && name.endsWith('.v8') && name !== path.basename(cacheFile))
            rmSync(path.join(folder, name), { force: true });
        return cacheFile;
      } catch {
        rmSync(partial, { force: true });
        return undefined;
      }
    },
  };
}
