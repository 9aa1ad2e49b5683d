/**
 * `npm run build`: dist/ as the package ships it, plain JavaScript that `node` runs. esbuild bundles src/cli.ts with
 * what it imports, dependencies included, into one CommonJS file, `dist/cli.cjs`: a process no longer resolves and
 * reads each of ~430 modules (`serve`) one by one, and `bin/skillpin.js` compiles that one file with V8's code cache
 * of an earlier run (bin/compileCache.js), which Node 20's ES modules cannot have. A module that only some commands
 * run is initialised when its command first asks for it (esbuild wraps each lazily); libraries that only some runs
 * need and that ship CommonJS of their own (openpgp for signatures, isomorphic-git without a git binary, the Redis
 * client for coordination, the MCP client of `verify`) stay out of the file and are required from node_modules
 * when used, as pino-pretty (for a terminal) and prom-client (metrics) are. Three modules of our dependencies are
 * bundled as lighter ones of ours that every start would otherwise compile or run for nothing: the SDK's `_shims`
 * (its Ajv validator then loads at the first schema it checks, scripts/sdkShims.ts), zod's locale table (English
 * only, scripts/zodLocales.ts) and mime's entry (its class without the default instance, scripts/mimeClass.ts). A
 * source map beside the file (`node --enable-source-maps` shows src/ lines in stacks).
 */
import { rmSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, type Plugin } from 'esbuild';

const root = path.resolve(import.meta.dirname, '..');
/** Where the package's JavaScript goes (`bin/skillpin.js` runs `dist/cli.cjs`). */
export const DIST = path.join(root, 'dist');
/** The one file of a bundle. */
export const CLI_FILE = 'cli.cjs';

/** Dependencies required from node_modules when a run uses them, never bundled (each ships CommonJS). */
const EXTERNAL = ['openpgp', 'isomorphic-git', '@redis/client', '@modelcontextprotocol/client'];

/** The SDK's `_shims`, zod's locale table and mime's entry, bundled as the lighter modules of ours beside this file. */
const lighter: Plugin = {
  name: 'skillpin-lighter',
  setup(build) {
    build.onResolve({ filter: /^@modelcontextprotocol\/server\/_shims$/ }, () => ({
      path: path.join(root, 'scripts', 'sdkShims.ts'),
    }));
    build.onResolve({ filter: /^mime$/ }, () => ({ path: path.join(root, 'scripts', 'mimeClass.ts') }));
    build.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, ({ importer }) =>
      importer.includes(`${path.sep}zod${path.sep}`)
        ? { path: path.join(root, 'scripts', 'zodLocales.ts') }
        : undefined,
    );
  },
};

/** Bundles src/cli.ts into `outdir`/cli.cjs (`outdir` emptied first). The tests run their child processes from such a
 * bundle. */
export async function bundle(outdir: string = DIST): Promise<void> {
  rmSync(outdir, { recursive: true, force: true });
  await build({
    entryPoints: [path.join(root, 'src', 'cli.ts')],
    outfile: path.join(outdir, CLI_FILE),
    bundle: true,
    format: 'cjs',
    platform: 'node',
    external: EXTERNAL.flatMap((name) => [name, `${name}/*`]),
    // `import()` of a library left out becomes `require()`: bin/compileCache.js compiles the bundle as a script,
    // where a dynamic import needs Node's experimental VM modules.
    supported: { 'dynamic-import': false },
    target: 'node20.12',
    // Identifiers are minified and their names not kept (keepNames re-names every function at load, ~3% of a
    // server's start): our error classes set `this.name` themselves, and logs and messages carry no class names.
    minify: true,
    // pino's file destination (sonic-boom) and worker-thread transports (thread-stream) are never used: logs go
    // through shared/logger.ts's own stderr destination. Left out, a server loads neither (nor worker_threads).
    plugins: [lighter],
    alias: {
      'sonic-boom': path.join(root, 'scripts', 'absent.cjs'),
      'thread-stream': path.join(root, 'scripts', 'absent.cjs'),
    },
    sourcemap: true,
    sourcesContent: false,
    // src/ is ES modules: `import.meta.url` is the bundle's own URL, from the `__filename` Node or
    // bin/compileCache.js gives it.
    define: { 'import.meta.url': '__skillpinUrl' },
    banner: { js: "var __skillpinUrl = require('node:url').pathToFileURL(__filename).href;" },
    logLevel: 'warning',
  });
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) await bundle();
