#!/usr/bin/env node
// The `skillpin` command: the compiled CLI in dist/, which `npm run build` writes (npm install in a checkout and
// npm pack run it through `prepare`).
import { fileURLToPath } from 'node:url';

const cli = new URL('../dist/cli.js', import.meta.url);
let run;
try {
  ({ run } = await import(cli.href));
} catch (error) {
  if (error?.code !== 'ERR_MODULE_NOT_FOUND' || !String(error.message).includes(fileURLToPath(cli)))
    throw error;
  process.stderr.write('skillpin: dist/ is missing; run `npm run build` in this checkout first\n');
  process.exit(2);
}
process.exitCode = await run(process.argv.slice(2));
