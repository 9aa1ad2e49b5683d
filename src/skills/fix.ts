import { isMap, isScalar, parseDocument } from 'yaml';
import { parseSkillMd } from './frontmatter.ts';
import { MAX_DESCRIPTION_LENGTH, MAX_NAME_LENGTH } from './limits.ts';
import { countCharacters, frontmatterViolations, isValidName } from './validate.ts';

/** One frontmatter value `fixFrontmatter` changed. */
export interface FrontmatterChange {
  key: 'name' | 'description';
  from: unknown;
  to: string;
}

export type FrontmatterFix =
  | { ok: true; text: string; changes: FrontmatterChange[] }
  | { ok: false; detail: string };

/** The name a folder implies: kebab case, a-z and 0-9 in single hyphens, at most 64 characters. */
export function kebabName(folder: string): string {
  const name = folder
    .normalize('NFKD')
    .replace(/([a-z0-9])([A-Z])/g, '$1-$2')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return name.slice(0, MAX_NAME_LENGTH).replace(/-+$/, '');
}

/** The description cut after its last sentence that fits the limit; at a word when no sentence fits. */
export function cutDescription(description: string): string {
  const characters = [...description];
  const fits = characters.slice(0, MAX_DESCRIPTION_LENGTH).join('');
  const sentence = /[.!?。](?=\s|$)/g;
  let end = -1;
  for (let match = sentence.exec(fits); match !== null; match = sentence.exec(fits))
    end = match.index + match[0].length;
  if (end > 0) return fits.slice(0, end).trimEnd();
  const word = fits.search(/\s\S*$/);
  return (word > 0 ? fits.slice(0, word) : fits).trimEnd();
}

/** A YAML scalar for `text`: plain when the frontmatter reader reads it back as itself, else double-quoted. */
function scalarOf(key: string, text: string): string {
  const plain = parseSkillMd(new TextEncoder().encode(`---\n${key}: ${text}\n---\n`));
  return plain.ok && plain.frontmatter[key] === text && !text.includes('\n') ? text : JSON.stringify(text);
}

/**
 * The smallest change to SKILL.md's frontmatter (LF text, no BOM) that makes it pass the name and description
 * rules: an invalid or missing name becomes the one `folder` implies, a description over the limit is cut. Only the
 * lines of the changed values change; the result is read back by the frontmatter reader and checked.
 */
export function fixFrontmatter(text: string, folder: string): FrontmatterFix {
  const parsed = parseSkillMd(new TextEncoder().encode(text));
  if (!parsed.ok) return { ok: false, detail: parsed.detail };
  const wanted = new Map<FrontmatterChange['key'], string>();
  const { name, description } = parsed.frontmatter;
  if (!isValidName(name)) wanted.set('name', kebabName(folder));
  if (typeof description === 'string' && countCharacters(description) > MAX_DESCRIPTION_LENGTH)
    wanted.set('description', cutDescription(description));
  if (wanted.size === 0) return { ok: false, detail: 'nothing to fix in its name or description' };
  if (wanted.get('name') === '') return { ok: false, detail: `folder "${folder}" implies no name` };
  const close = text.indexOf('\n---', 3);
  const yaml = text.slice(4, close + 1);
  const doc = parseDocument(yaml, { version: '1.2', schema: 'core' });
  if (!isMap(doc.contents)) return { ok: false, detail: 'the frontmatter is not a mapping' };
  // Value ranges in the YAML, replaced from the last so earlier offsets stay true.
  const edits: Array<{ start: number; end: number; value: string }> = [];
  for (const [key, value] of wanted) {
    const pair = doc.contents.items.find((item) => isScalar(item.key) && item.key.value === key);
    const range = pair !== undefined && isScalar(pair.value) ? pair.value.range : undefined;
    if (pair !== undefined && range === undefined)
      return { ok: false, detail: `"${key}" is not a single value` };
    const scalar = scalarOf(key, value);
    if (range === undefined || range === null) edits.push({ start: 0, end: 0, value: `${key}: ${scalar}\n` });
    else {
      // A block scalar's range runs through its last line break: the line break stays.
      const end = yaml[range[1] - 1] === '\n' ? range[1] - 1 : range[1];
      edits.push({ start: range[0], end, value: scalar });
    }
  }
  edits.sort((a, b) => b.start - a.start);
  let fixed = yaml;
  for (const edit of edits) fixed = fixed.slice(0, edit.start) + edit.value + fixed.slice(edit.end);
  const result = `---\n${fixed}${text.slice(close + 1)}`;
  return checked(result, wanted, parsed.frontmatter);
}

/** The fixed text when the reader reads the wanted values back and the name and description rules pass. */
function checked(
  text: string,
  wanted: Map<FrontmatterChange['key'], string>,
  before: Record<string, unknown>,
): FrontmatterFix {
  const reread = parseSkillMd(new TextEncoder().encode(text));
  if (!reread.ok) return { ok: false, detail: `the fixed frontmatter does not parse: ${reread.detail}` };
  const left = frontmatterViolations(reread.frontmatter).filter(
    (v) => v.key === 'name' || v.key === 'description',
  );
  const same = [...wanted].every(([key, value]) => reread.frontmatter[key] === value);
  if (!same || left.length > 0) return { ok: false, detail: 'the fix does not read back as intended' };
  const changes = [...wanted].map(([key, to]) => ({ key, from: before[key], to }));
  return { ok: true, text, changes };
}
