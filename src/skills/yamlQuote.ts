import { parseDocument } from 'yaml';

/** A `key: value` line whose value YAML misreads, and that value as a quoted scalar holding the text as written. */
export interface QuotableValue {
  key: string;
  /** The line's index in the YAML (0-based). */
  row: number;
  /** Offsets in the YAML of the value as written (leading and trailing blanks left out). */
  start: number;
  end: number;
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

/** A `key: value` line of the YAML: where its value starts, and whether the value goes on over the next lines. */
interface KeyLine {
  key: string;
  indent: string;
  raw: string;
  start: number;
  row: number;
  continues: boolean;
}

/** The `key: value` line of the YAML holding `offset`, or `undefined` when that line is not one. */
function keyLineAt(yaml: string, offset: number): KeyLine | undefined {
  const lineStart = yaml.lastIndexOf('\n', Math.max(0, offset - 1)) + 1;
  const lineEnd = yaml.indexOf('\n', lineStart);
  const match = KEY_LINE.exec(yaml.slice(lineStart, lineEnd === -1 ? yaml.length : lineEnd));
  if (match === null) return undefined;
  const [, indent, key, gap, raw] = match as unknown as [string, string, string, string, string];
  const next = lineEnd === -1 ? '' : (yaml.slice(lineEnd + 1).split('\n', 1)[0] ?? '');
  return {
    key,
    indent,
    raw,
    start: lineStart + indent.length + key.length + 1 + gap.length,
    row: yaml.slice(0, lineStart).split('\n').length - 1,
    continues: next.trim() !== '' && /^ */.exec(next)![0].length > indent.length,
  };
}

/**
 * The line's value as a quoted scalar holding it as written: what the frontmatter reader suggests and `check --fix`
 * writes. `undefined` when the value goes on over the next lines (YAML folds them: quoting one line would change
 * it), is a block scalar, a list or mapping below the top, or its quoted form would not read back as the text.
 */
function quotable(line: KeyLine): QuotableValue | undefined {
  const { key, indent, raw, start, row } = line;
  if (line.continues || raw.startsWith('|') || raw.startsWith('>')) return undefined;
  // A list or mapping below the top (metadata's, say) was meant as one: quoting it would make it a string.
  if (indent !== '' && (raw.startsWith('[') || raw.startsWith('{'))) return undefined;
  const text = meantText(raw);
  if (text === undefined) return undefined;
  const quoted = quoteScalar(text);
  if (readsAs(quoted) !== text) return undefined;
  return { key, row, start, end: start + raw.length, text, quoted };
}

/** Why YAML misreads a value, in words, by the parser's error code; `undefined` for a code not listed. */
function misreadOf(code: string, { key, raw }: KeyLine): string | undefined {
  const what = `the value of "${key}"`;
  if (code === 'BLOCK_AS_IMPLICIT_KEY') return `YAML reads the ": " in ${what} as the start of a mapping`;
  if (code === 'BAD_SCALAR_START') return `${what} starts with "${raw[0]}", which YAML reserves`;
  if (code !== 'UNEXPECTED_TOKEN') return undefined;
  if (raw.startsWith('"') || raw.startsWith("'")) return `${what} goes on after the quote that closes it`;
  if (raw.startsWith('[')) return `YAML reads ${what} as a list, and text follows it`;
  if (raw.startsWith('{')) return `YAML reads ${what} as a mapping, and text follows it`;
  return undefined;
}

/** The `key: value` line whose value causes a YAML error (its parser code, at `offset`), and why YAML misreads it. */
function misreadLine(yaml: string, code: string, offset: number): { line: KeyLine; why: string } | undefined {
  const line = keyLineAt(yaml, offset);
  const why = line === undefined ? undefined : misreadOf(code, line);
  return why === undefined ? undefined : { line: line!, why };
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
  const misread = misreadLine(yaml, code, offset);
  if (misread === undefined) return undefined;
  const value = quotable(misread.line);
  return value === undefined ? undefined : { value, why: misread.why };
}

/** What to do about a YAML error a value on its line causes, in words, and where that value starts. */
export function quotingAdvice(
  yaml: string,
  code: string,
  offset: number,
): { detail: string; offset: number } | undefined {
  const misread = misreadLine(yaml, code, offset);
  if (misread === undefined) return undefined;
  const { line, why } = misread;
  const value = quotable(line);
  if (value !== undefined)
    return { detail: `${why}; quote the value: ${quotedPreview(value)}`, offset: line.start };
  if (line.continues) return { detail: `${why}; quote the value, all of its lines`, offset: line.start };
  const quotes = line.raw.startsWith('"') || line.raw.startsWith("'");
  return {
    detail: `${why}; ${quotes ? 'escape the quotes inside it' : 'remove what follows it'}`,
    offset: line.start,
  };
}
