#!/usr/bin/env node
// The `skillpin` command: the compiled CLI in dist/cli.cjs, which `npm run build` writes (npm pack runs it through
// `prepack`, npm start when dist/ is older than src/; npm install runs no script), compiled with V8's code cache of
// an earlier run (bin/compileCache.js).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { cacheDir, flagsBeforeCompile, requireCached } from './compileCache.js';

const args = process.argv.slice(2);
const cli = fileURLToPath(new URL('../dist/cli.cjs', import.meta.url));
if (!existsSync(cli)) {
  process.stderr.write('skillpin: dist/ is missing; run `npm run build` in this checkout first\n');
  // 70 (EX_SOFTWARE, docs/exit-codes.md): the installed program itself is incomplete.
  process.exit(70);
}
const { serving, flags } = flagsBeforeCompile(args, process.execArgv);
for (const flag of flags) setFlagsFromString(flag);
const loaded = requireCached(cli, { dir: cacheDir(), kind: serving ? 'serve' : 'run' });
process.once('exit', () => loaded.save());
process.exitCode = await loaded.exports.main(args);
