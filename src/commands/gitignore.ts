import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** What `ignoreIn` did to the folder's .gitignore. */
export type Ignored = 'created' | 'appended' | 'already';

/**
 * Makes the `.gitignore` of `folder` ignore the folder `name` in it: created when absent, the entry appended once;
 * a line that ignores it already (`name`, `/name`, with or without a trailing `/`) is left as it is.
 */
export function ignoreIn(folder: string, name: string, why: string): Ignored {
  const file = path.join(folder, '.gitignore');
  let text: string | undefined;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const forms = new Set([name, `${name}/`, `/${name}`, `/${name}/`]);
  if (text?.split(/\r?\n/).some((line) => forms.has(line.trim()))) return 'already';
  const gap = text === undefined || text === '' || text.endsWith('\n') ? '' : '\n';
  writeFileSync(file, `${text ?? ''}${gap}# ${why}\n/${name}/\n`);
  return text === undefined ? 'created' : 'appended';
}
