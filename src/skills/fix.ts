import { isMap, isScalar, parseDocument } from 'yaml';
import { FIRST_YAML_LINE, parseSkillMd } from './frontmatter.ts';
import { misreadValue } from './yamlQuote.ts';
import { MAX_DESCRIPTION_LENGTH, MAX_NAME_LENGTH } from './limits.ts';
import { countCharacters, frontmatterViolations, isValidName } from './validate.ts';

/** One frontmatter value `fixFrontmatter` changed: a name or description replaced, or a value quoted as written. */
export type FrontmatterChange =
  | { kind: 'value'; key: 'name' | 'description'; from: unknown; to: string }
  | { kind: 'quote'; key: string /** Its line in SKILL.md (1-based). */; line: number };

export type FrontmatterFix =
  | { ok: true; text: string; changes: FrontmatterChange[] }
  | { ok: false; detail: string };

/** The skill's folder, which names it; a skill at the repository's root is served under any valid name. */
export interface FixTarget {
  folder: string;
  root: boolean;
}

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

/** The frontmatter's YAML in SKILL.md's text (LF, no BOM), found as the reader finds it. */
function yamlSpan(text: string): { start: number; end: number } | undefined {
  if (!text.startsWith('---\n')) return undefined;
  const close = /^---[\t ]*$/m.exec(text.slice(4));
  return close === null ? undefined : { start: 4, end: 4 + close.index };
}

/**
 * The frontmatter with each value YAML misreads (a `: ` inside it, text after its closing quote, a reserved first
 * character) quoted, its text kept as written; the text unchanged when it reads. Fails, saying why, on any
 * other YAML error.
 */
function quoteMisreadValues(text: string): FrontmatterFix {
  const first = parseSkillMd(new TextEncoder().encode(text));
  if (first.ok) return { ok: true, text, changes: [] };
  const span = first.reason === 'frontmatter-invalid' ? yamlSpan(text) : undefined;
  if (span === undefined) return unreadable(text);
  let yaml = text.slice(span.start, span.end);
  const changes: FrontmatterChange[] = [];
  const rows = new Set<number>();
  for (;;) {
    const doc = parseDocument(yaml, { version: '1.2', schema: 'core', uniqueKeys: true });
    const error = doc.errors[0] ?? doc.warnings[0];
    if (error === undefined) break;
    const misread = misreadValue(yaml, error.code, error.pos[0]);
    // Each round quotes another line: one already quoted that still fails is past mending here.
    if (misread === undefined || rows.has(misread.value.row))
      return unreadable(text.slice(0, span.start) + yaml + text.slice(span.end));
    const { value } = misread;
    rows.add(value.row);
    yaml = yaml.slice(0, value.start) + value.quoted + yaml.slice(value.end);
    changes.push({ kind: 'quote', key: value.key, line: value.row + FIRST_YAML_LINE });
  }
  const quoted = text.slice(0, span.start) + yaml + text.slice(span.end);
  return parseSkillMd(new TextEncoder().encode(quoted)).ok
    ? { ok: true, text: quoted, changes }
    : unreadable(quoted);
}

/** Why the reader refuses `text`, at the line it names. */
function unreadable(text: string): FrontmatterFix {
  const read = parseSkillMd(new TextEncoder().encode(text));
  if (read.ok) throw new Error('the text reads');
  return { ok: false, detail: `${read.line === undefined ? '' : `line ${read.line}: `}${read.detail}` };
}

/** The name an invalid or missing one becomes: the folder's, which must itself be a valid name. */
function nameFor(target: FixTarget): { ok: true; name: string } | { ok: false; detail: string } {
  const { folder } = target;
  const implied = kebabName(folder);
  if (target.root || isValidName(folder))
    return implied === ''
      ? { ok: false, detail: `folder "${folder}" implies no name` }
      : { ok: true, name: target.root ? implied : folder };
  return {
    ok: false,
    detail:
      `its folder "${folder}" is not a valid name, so no name can match it: rename the folder` +
      `${implied === '' ? '' : ` (to "${implied}", say)`} and set the name to match`,
  };
}

/**
 * The smallest change to SKILL.md's frontmatter (LF text, no BOM) that makes it read and pass the name and
 * description rules: a value YAML misreads is quoted as written, an invalid or missing name becomes the folder's
 * (so the skill is served where it lives, with no name-mismatch), a description over the limit is cut. Only the
 * lines of the changed values change; the result is read back by the frontmatter reader and checked.
 */
export function fixFrontmatter(text: string, target: FixTarget): FrontmatterFix {
  const quoted = quoteMisreadValues(text);
  if (!quoted.ok) return quoted;
  const parsed = parseSkillMd(new TextEncoder().encode(quoted.text));
  if (!parsed.ok) return { ok: false, detail: parsed.detail };
  const wanted = new Map<'name' | 'description', string>();
  const { name, description } = parsed.frontmatter;
  if (!isValidName(name)) {
    const named = nameFor(target);
    if (!named.ok) return named;
    wanted.set('name', named.name);
  }
  if (typeof description === 'string' && countCharacters(description) > MAX_DESCRIPTION_LENGTH)
    wanted.set('description', cutDescription(description));
  if (wanted.size === 0 && quoted.changes.length === 0)
    return { ok: false, detail: 'nothing to fix in its name or description' };
  const edited = withValues(quoted.text, wanted);
  if (!edited.ok) return edited;
  return checked(edited.text, wanted, parsed.frontmatter, quoted.changes);
}

/** The text with the values of `wanted` replaced (or added, first): only their lines change. */
function withValues(text: string, wanted: ReadonlyMap<string, string>): FrontmatterFix {
  if (wanted.size === 0) return { ok: true, text, changes: [] };
  const span = yamlSpan(text)!;
  const yaml = text.slice(span.start, span.end);
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
  return { ok: true, text: text.slice(0, span.start) + fixed + text.slice(span.end), changes: [] };
}

/** The fixed text when the reader reads the wanted values back and the name and description rules pass. */
function checked(
  text: string,
  wanted: ReadonlyMap<'name' | 'description', string>,
  before: Record<string, unknown>,
  quotes: FrontmatterChange[],
): FrontmatterFix {
  const reread = parseSkillMd(new TextEncoder().encode(text));
  if (!reread.ok) return { ok: false, detail: `the fixed frontmatter does not parse: ${reread.detail}` };
  const left = frontmatterViolations(reread.frontmatter).filter(
    (v) => v.key === 'name' || v.key === 'description',
  );
  const same = [...wanted].every(([key, value]) => reread.frontmatter[key] === value);
  if (left.length > 0)
    return { ok: false, detail: `with the fix, still: ${left.map((v) => v.detail).join('; ')}` };
  if (!same) return { ok: false, detail: 'the fix does not read back as intended' };
  const values = [...wanted].map(([key, to]) => ({ kind: 'value' as const, key, from: before[key], to }));
  return { ok: true, text, changes: [...quotes, ...values] };
}
