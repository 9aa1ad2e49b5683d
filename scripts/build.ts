/**
 * `npm run build`: dist/ as the package ships it, plain JavaScript that `node` runs. esbuild bundles src/cli.ts with
 * what it imports, dependencies included, into a few files: a process no longer resolves and reads each of ~430
 * modules (`serve`) one by one. Each command's module, and a library only some runs need (openpgp, isomorphic-git,
 * the MCP client), stays in a chunk of its own that the dynamic import asking for it loads; pino is in the chunk of
 * the logger (a command that logs loads it). pino-pretty (for a terminal) and prom-client (metrics), CommonJS
 * required where they are used, are read from node_modules. Three modules of our dependencies are bundled as
 * lighter ones of ours that every start would otherwise compile or run for nothing: the SDK's `_shims` (its Ajv
 * validator then loads at the first schema it checks, scripts/sdkShims.ts), zod's locale table (English only,
 * scripts/zodLocales.ts) and mime's entry (its class without the default instance, scripts/mimeClass.ts). A
 * source map beside each file (`node --enable-source-maps` shows src/ lines in stacks).
 */
import { rmSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, type Plugin } from 'esbuild';

const root = path.resolve(import.meta.dirname, '..');
/** Where the package's JavaScript goes (`bin/skillpin.js` runs `dist/cli.js`). */
export const DIST = path.join(root, 'dist');

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

/** Bundles src/cli.ts into `outdir` (emptied first). The tests run their child processes from such a bundle. */
export async function bundle(outdir: string = DIST): Promise<void> {
  rmSync(outdir, { recursive: true, force: true });
  await build({
    entryPoints: [path.join(root, 'src', 'cli.ts')],
    outdir,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
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
    // CommonJS bundled into an ES module requires Node's built-ins by name.
    banner: {
      js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
    },
    logLevel: 'warning',
  });
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) await bundle();
