import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from './helpers/fixtures.ts';

/** Where derived data may not be kept behind the reader's back: what is served is held by mcp/serving.ts. */
const ROOMS = ['catalog', 'mcp', 'index'];

/** A declaration at a module's top level that makes a collection (a cache, if it is filled at run time). */
const MODULE_COLLECTION =
  /^(?:export )?(?:const|let|var) (\w+)\b[^=]*= new (WeakMap|Map|Set|WeakSet|LRU\w*)\b/;

function* filesUnder(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* filesUnder(full);
    else if (entry.name.endsWith('.ts')) yield full;
  }
}

describe('module-level collections in catalog/, mcp/ and index/', () => {
  it('are only a constant filled once at load', () => {
    const found: string[] = [];
    for (const room of ROOMS)
      for (const file of filesUnder(path.join(PROJECT_ROOT, 'src', room)))
        for (const line of readFileSync(file, 'utf8').split('\n')) {
          const match = MODULE_COLLECTION.exec(line);
          if (match !== null) found.push(`${path.relative(PROJECT_ROOT, file)}: ${match[1]} (${match[2]})`);
        }
    expect(found.sort()).toEqual([
      // Filled once at load: the words a query's adjacent pairs skip.
      'src/index/terms.ts: STOP_WORDS (Set)',
    ]);
  });
});
