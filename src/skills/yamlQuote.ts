import { parseDocument } from 'yaml';

/** A `key: value` line whose value YAML misreads, and that value as a quoted scalar holding the text as written. */
export interface QuotableValue {
  key: string;
  /** The line's index in the YAML (0-based). */
  row: number;
  /** Offsets in the YAML of the value as written (leading and trailing blanks left out). */
  start: number;
  end: number;
  /** The value as written. */
  raw: string;
  /** What the author meant: the text as written, or the inside of quotes that open and close it. */
  text: string;
  /** `text` as a YAML quoted scalar that reads back as `text`. */
  quoted: string;
}

/** `key: value` on one line, the key indented by spaces (a nested mapping's keys too). */
const KEY_LINE = /^( *)([A-Za-z_][\w.-]*):([ \t]+)(\S(?:.*\S)?)[ \t]*$/;

/** Reads a YAML scalar the way the frontmatter reader does: what a quoted form must read back as. */
function readsAs(scalar: string): unknown {
  const doc = parseDocument(scalar, { version: '1.2', schema: 'core' });
  return doc.errors.length > 0 ? undefined : doc.toJS();
}

/** `text` quoted: in single quotes (only `'` doubled), or double quotes when that spares doubling. */
function quoteScalar(text: string): string {
  if (text.includes("'") && !/["\\]/.test(text)) return JSON.stringify(text);
  return `'${text.replaceAll("'", "''")}'`;
}

/** The text the author meant by a value YAML cannot read: the inside of quotes around all of it, else all of it. */
function meantText(raw: string): string | undefined {
  const quote = raw[0];
  if (raw.length < 2 || (quote !== '"' && quote !== "'") || raw.at(-1) !== quote) return raw;
  const inside = raw.slice(1, -1);
  // A backslash inside double quotes may be an escape the author meant: not ours to guess.
  return quote === '"' && inside.includes('\\') ? undefined : inside;
}

/**
 * The value on the line of the YAML holding `offset`, when it is a one-line `key: value` that a quoted scalar can
 * hold as written: what the frontmatter reader suggests and `check --fix` writes. `undefined` when the line is not
 * such a line, its value goes on over the next lines, or the quoted form would not read back as the text.
 */
function quotableValueAt(yaml: string, offset: number): QuotableValue | undefined {
  const lineStart = yaml.lastIndexOf('\n', Math.max(0, offset - 1)) + 1;
  const lineEnd = yaml.indexOf('\n', lineStart);
  const line = yaml.slice(lineStart, lineEnd === -1 ? yaml.length : lineEnd);
  const match = KEY_LINE.exec(line);
  if (match === null) return undefined;
  const [, indent, key, gap, raw] = match as unknown as [string, string, string, string, string];
  // A value that goes on over more indented lines is folded by YAML: quoting one line would change it.
  const next = lineEnd === -1 ? '' : (yaml.slice(lineEnd + 1).split('\n', 1)[0] ?? '');
  if (next.trim() !== '' && /^ */.exec(next)![0].length > indent.length) return undefined;
  if (raw.startsWith('|') || raw.startsWith('>')) return undefined;
  // A list or mapping below the top (metadata's, say) was meant as one: quoting it would make it a string.
  if (indent !== '' && (raw.startsWith('[') || raw.startsWith('{'))) return undefined;
  const text = meantText(raw);
  if (text === undefined) return undefined;
  const quoted = quoteScalar(text);
  if (readsAs(quoted) !== text) return undefined;
  const start = lineStart + indent.length + key.length + 1 + gap.length;
  const row = yaml.slice(0, lineStart).split('\n').length - 1;
  return { key, row, start, end: start + raw.length, raw, text, quoted };
}

/** Why YAML misreads a value, in words, by the parser's error code; `undefined` for a code not listed. */
function misreadOf(code: string, { key, raw }: QuotableValue): string | undefined {
  const what = `the value of "${key}"`;
  if (code === 'BLOCK_AS_IMPLICIT_KEY') return `YAML reads the ": " in ${what} as the start of a mapping`;
  if (code === 'BAD_SCALAR_START') return `${what} starts with "${raw[0]}", which YAML reserves`;
  if (code !== 'UNEXPECTED_TOKEN') return undefined;
  if (raw.startsWith('"') || raw.startsWith("'")) return `${what} goes on after the quote that closes it`;
  if (raw.startsWith('[')) return `YAML reads ${what} as a list, and text follows it`;
  if (raw.startsWith('{')) return `YAML reads ${what} as a mapping, and text follows it`;
  return undefined;
}

/** `key: quoted`, at most `max` characters of the quoted value: what a message shows. */
function quotedPreview(value: QuotableValue, max = 60): string {
  const characters = [...value.quoted];
  const shown = characters.length <= max ? value.quoted : `${characters.slice(0, max - 1).join('')}…`;
  return `${value.key}: ${shown}`;
}

/**
 * The value a YAML error (its parser code, at `offset`) comes from, when the error is one that quoting that value
 * mends, with why YAML misreads it in words; `undefined` for any other error.
 */
export function misreadValue(
  yaml: string,
  code: string,
  offset: number,
): { value: QuotableValue; why: string } | undefined {
  const value = quotableValueAt(yaml, offset);
  const why = value === undefined ? undefined : misreadOf(code, value);
  return value === undefined || why === undefined ? undefined : { value, why };
}

/** What to do about a YAML error that quoting a value mends, in words, and where that value starts. */
export function quotingAdvice(
  yaml: string,
  code: string,
  offset: number,
): { detail: string; offset: number } | undefined {
  const misread = misreadValue(yaml, code, offset);
  if (misread === undefined) return undefined;
  const { value, why } = misread;
  return { detail: `${why}; quote the value: ${quotedPreview(value)}`, offset: value.start };
}
