#!/usr/bin/env node
// The `skillpin` command: the compiled CLI in dist/, which `npm run build` writes (npm pack runs it through
// `prepack`, npm start when dist/ is older than src/; npm install runs no script).
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
