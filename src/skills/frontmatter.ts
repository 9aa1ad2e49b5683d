import { isMap, isScalar, LineCounter, parseDocument, Parser } from 'yaml';
import { MAX_FRONTMATTER_BYTES } from './limits.ts';
import type { ProblemReason } from '../shared/reasons.ts';
import { ownCopy } from '../shared/text.ts';
import { quotingAdvice } from './yamlQuote.ts';

export type Frontmatter = Record<string, unknown>;
export type FrontmatterResult =
  | {
      ok: true;
      frontmatter: Frontmatter;
      body: string;
      /** The line in SKILL.md (1-based) of each top-level key: where a problem with it is shown. */
      lines: Record<string, number>;
      /** Read as plain `key: value` lines, which every YAML reader (the MCP SDK's subset included) reads alike. */
      plain?: true;
    }
  | { ok: false; reason: ProblemReason; detail: string; line?: number };

/** A parse result without the body: what an index needs of a SKILL.md (its frontmatter, where each key is). */
export type FrontmatterOnly =
  | Omit<Extract<FrontmatterResult, { ok: true }>, 'body'>
  | Extract<FrontmatterResult, { ok: false }>;

/** A copy of `value` whose strings are strings of their own: none keeps the SKILL.md text it was cut from alive. */
function detached(value: unknown): unknown {
  if (typeof value === 'string') return ownCopy(value);
  if (Array.isArray(value)) return value.map(detached);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, detached(inner)]));
}

/**
 * `parsed` without its body, its frontmatter copied out of the text: what a cache of many SKILL.md files keeps
 * (a value sliced from the text kept all of it, about 5.6 KB a skill in real catalogs).
 */
export function frontmatterOnly(parsed: FrontmatterResult): FrontmatterOnly {
  if (!parsed.ok) return parsed;
  const { body: _, frontmatter, ...rest } = parsed;
  return { ...rest, frontmatter: detached(frontmatter) as Frontmatter };
}

/** SKILL.md's first line is `---`: the frontmatter's first line is the file's second. */
export const FIRST_YAML_LINE = 2;

const fail = (reason: ProblemReason, detail: string, line?: number): FrontmatterResult => ({
  ok: false,
  reason,
  detail,
  line,
});

/** Decodes UTF-8 only when nothing is lost; `undefined` otherwise. */
export function decodeUtf8(bytes: Uint8Array): string | undefined {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

/**
 * Splits SKILL.md into frontmatter and body and parses the frontmatter as YAML 1.2 (core schema).
 * A BOM and CRLF line ends are accepted; anchors, aliases, tags and values JSON cannot carry are refused,
 * so the entry's frontmatter is exactly what a host re-parsing the file gets.
 */
export function parseSkillMd(bytes: Uint8Array): FrontmatterResult {
  const decoded = decodeUtf8(bytes);
  if (decoded === undefined) return fail('skill-md-not-utf8', 'SKILL.md is not valid UTF-8');
  // Line numbers count from the file's first line, as an editor shows them; CRLF and a BOM do not shift them.
  let text = decoded.replaceAll('\r\n', '\n');
  if (text.startsWith('\uFEFF')) text = text.slice(1);
  if (!text.startsWith('---\n'))
    return fail('frontmatter-missing', 'SKILL.md must begin with a "---" line', 1);
  const rest = text.slice(4);
  const close = /^---[\t ]*$/m.exec(rest);
  if (close === null) return fail('frontmatter-unclosed', 'the frontmatter has no closing "---" line', 1);
  const yaml = rest.slice(0, close.index);
  const size = Buffer.byteLength(yaml, 'utf8');
  if (size > MAX_FRONTMATTER_BYTES) {
    return fail(
      'frontmatter-too-large',
      `the frontmatter is ${size} bytes; the limit is ${MAX_FRONTMATTER_BYTES}`,
      1,
    );
  }
  let body = rest.slice(close.index + close[0].length);
  if (body.startsWith('\n')) body = body.slice(1);
  const plain = readPlainMapping(yaml);
  if (plain !== undefined)
    return { ok: true, frontmatter: plain.value, body, lines: plain.lines, plain: true };
  const parsed = readYamlMapping(yaml);
  return parsed.ok
    ? { ok: true, frontmatter: parsed.value, body, lines: parsed.lines }
    : fail('frontmatter-invalid', parsed.detail, parsed.line);
}

/**
 * `key: value` with a plain string value that YAML 1.2 and the MCP SDK's subset reader both read as the text
 * itself: a letter first, no tab, no control or non-character, no `: ` or ` #`, no trailing `:` or space.
 */
const PLAIN_LINE =
  /^([A-Za-z][\w.-]{0,63}): (\p{L}(?:[^\t\p{Cc}\u2028\u2029\ufeff\ufffe\uffff]*[^\s:\p{Cc}\u2028\u2029\ufeff\ufffe\uffff])?)$/u;
/** Words the core schema reads as null or a boolean. */
const NOT_STRING = /^(?:null|Null|NULL|true|True|TRUE|false|False|FALSE)$/;

/**
 * The frontmatter when every line is a plain `key: value` (the common case), read without a YAML parser; otherwise
 * `undefined` and the YAML parser reads it. test/skills/plain.test.ts holds it to both readers.
 */
export function readPlainMapping(
  yaml: string,
): { value: Frontmatter; lines: Record<string, number> } | undefined {
  const value: Frontmatter = {};
  const lines: Record<string, number> = {};
  const rows = yaml.split('\n');
  if (rows.at(-1) === '') rows.pop();
  if (rows.length === 0) return undefined;
  for (const [index, row] of rows.entries()) {
    const match = PLAIN_LINE.exec(row);
    if (match === null) return undefined;
    const [, key, text] = match as unknown as [string, string, string];
    if (Object.hasOwn(value, key) || NOT_STRING.test(key) || NOT_STRING.test(text)) return undefined;
    if (text.includes(': ') || text.includes(' #')) return undefined;
    value[key] = text;
    lines[key] = index + FIRST_YAML_LINE;
  }
  return { value, lines };
}

/** The frontmatter read by the YAML parser (YAML 1.2, core schema), or why it cannot be served. */
export function readYamlMapping(
  yaml: string,
):
  | { ok: true; value: Frontmatter; lines: Record<string, number> }
  | { ok: false; detail: string; line?: number } {
  const counter = new LineCounter();
  const doc = parseDocument(yaml, {
    version: '1.2',
    schema: 'core',
    uniqueKeys: true,
    prettyErrors: false,
    lineCounter: counter,
  });
  const lineOf = (offset: number) => counter.linePos(offset).line + FIRST_YAML_LINE - 1;
  const error = doc.errors[0] ?? doc.warnings[0];
  if (error !== undefined) {
    // Where quoting a value mends it, the message says so at the line of that value.
    const advice = quotingAdvice(yaml, error.code, error.pos[0]);
    if (advice !== undefined) return { ok: false, detail: advice.detail, line: lineOf(advice.offset) };
    return { ok: false, detail: `YAML: ${firstLine(error.message)}`, line: lineOf(error.pos[0]) };
  }
  const refused = refusedSyntax(yaml);
  if (refused !== undefined) return { ok: false, detail: refused.detail, line: lineOf(refused.offset) };
  const lines: Record<string, number> = {};
  if (isMap(doc.contents))
    for (const pair of doc.contents.items)
      if (isScalar(pair.key) && typeof pair.key.value === 'string' && pair.key.range !== undefined)
        lines[pair.key.value] = lineOf(pair.key.range[0]);
  if (doc.contents === null) return { ok: true, value: {}, lines };
  const value: unknown = doc.toJS({ maxAliasCount: 0 });
  if (typeof value !== 'object' || value === null || Array.isArray(value) || value instanceof Map) {
    return { ok: false, detail: 'the frontmatter must be a mapping of keys to values' };
  }
  const bad = nonJson(value, '');
  if (bad !== undefined) return { ok: false, detail: bad };
  return { ok: true, value: value as Frontmatter, lines };
}

const REFUSED: Record<string, string> = {
  anchor: 'anchors are not allowed',
  alias: 'aliases are not allowed',
  tag: 'tags are not allowed',
};

/** Anchors, aliases and tags, found in the concrete syntax tree (what the author wrote, not what it resolves to). */
function refusedSyntax(yaml: string): { detail: string; offset: number } | undefined {
  const search = (node: unknown): { detail: string; offset: number } | undefined => {
    if (Array.isArray(node)) {
      for (const item of node) {
        const found = search(item);
        if (found !== undefined) return found;
      }
      return undefined;
    }
    if (typeof node !== 'object' || node === null) return undefined;
    const { type, offset } = node as { type?: unknown; offset?: unknown };
    if (typeof type === 'string' && REFUSED[type] !== undefined)
      return { detail: REFUSED[type], offset: typeof offset === 'number' ? offset : 0 };
    for (const value of Object.values(node)) {
      const found = search(value);
      if (found !== undefined) return found;
    }
    return undefined;
  };
  return search([...new Parser().parse(yaml)]);
}

/** A description of the first value JSON cannot carry, or `undefined`. */
function nonJson(value: unknown, at: string): string | undefined {
  if (typeof value === 'number' && !Number.isFinite(value))
    return `${at || 'a value'} is not a finite number`;
  if (typeof value === 'bigint') return `${at} is too large a number`;
  if (value === null || typeof value !== 'object') return undefined;
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      const bad = nonJson(item, `${at}[${index}]`);
      if (bad !== undefined) return bad;
    }
    return undefined;
  }
  if (Object.getPrototypeOf(value) !== Object.prototype) return `${at || 'a value'} is not a plain mapping`;
  for (const [key, item] of Object.entries(value)) {
    if (key === '__proto__') return 'the key "__proto__" is not allowed';
    const bad = nonJson(item, at === '' ? key : `${at}.${key}`);
    if (bad !== undefined) return bad;
  }
  return undefined;
}

function firstLine(message: string): string {
  return message.split('\n', 1)[0] ?? message;
}
