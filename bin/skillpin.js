#!/usr/bin/env node
// The `skillpin` command: the compiled CLI in dist/, which `npm run build` writes (npm pack runs it through
// `prepack`, npm start when dist/ is older than src/; npm install runs no script).
import module from 'node:module';
import { fileURLToPath } from 'node:url';

// Node 22.1 and later keep V8's compiled code of dist/ between runs (in the temp folder, or NODE_COMPILE_CACHE):
// every stdio host starts a process per window, and compiling the bundle is most of a start. Node 20 has no such
// cache and goes on without it.
module.enableCompileCache?.();

const cli = new URL('../dist/cli.js', import.meta.url);
let main;
try {
  ({ main } = await import(cli.href));
} catch (error) {
  if (error?.code !== 'ERR_MODULE_NOT_FOUND' || !String(error.message).includes(fileURLToPath(cli)))
    throw error;
  process.stderr.write('skillpin: dist/ is missing; run `npm run build` in this checkout first\n');
  // 70 (EX_SOFTWARE, docs/exit-codes.md): the installed program itself is incomplete.
  process.exit(70);
}
process.exitCode = await main(process.argv.slice(2));
