/**
 * `node --import tsx --import <this file> …` records what the process loads into the file named by
 * SKILLPIN_RECORD_MODULES, one URL a line: every ES module as the loader loads it (a hook, off-thread), then at
 * exit every CommonJS module in require's cache and a last line `exit` (no `exit`: the record is incomplete).
 */
import { appendFileSync, writeFileSync } from 'node:fs';
import { createRequire, register } from 'node:module';
import { pathToFileURL } from 'node:url';

const file = process.env['SKILLPIN_RECORD_MODULES']!;
writeFileSync(file, '');
const hook = `import { appendFileSync } from 'node:fs';
export async function load(url, context, next) {
  appendFileSync(${JSON.stringify(file)}, url + '\\n');
  return next(url, context);
}`;
register(`data:text/javascript,${encodeURIComponent(hook)}`);
const { cache } = createRequire(import.meta.url);
process.on('exit', () => {
  const required = Object.keys(cache).map((module) => `${pathToFileURL(module).href}\n`);
  appendFileSync(file, `${required.join('')}exit\n`);
});
