import { type Document, isMap, isPair, isScalar, type LineCounter, type Node } from 'yaml';
import type { z } from 'zod';
import { closest } from '../shared/text.ts';

/** A key path as a user reads it: `sources[0].poll`, or `(top level)`. */
export function keyPath(segments: ReadonlyArray<PropertyKey>): string {
  return (
    segments
      .map((segment, index) =>
        typeof segment === 'number' ? `[${segment}]` : `${index === 0 ? '' : '.'}${String(segment)}`,
      )
      .join('') || '(top level)'
  );
}

/** One problem of a config file: where it is (1-based line and column, when known) and what to do. */
export interface ConfigProblem {
  line?: number;
  column?: number;
  key?: string;
  message: string;
}

/** `file:line:column: key: message`, as compilers print it, so editors and terminals can jump there. */
export function formatProblem(file: string, problem: ConfigProblem): string {
  const at = problem.line === undefined ? '' : `:${problem.line}:${problem.column ?? 1}`;
  return `${file}${at}: ${problem.key === undefined ? '' : `${problem.key}: `}${problem.message}`;
}

/** Words people use for a key skillpin names otherwise. */
const SYNONYMS: Record<string, string[]> = {
  ref: ['branch', 'tag', 'revision', 'rev', 'version'],
  commit: ['sha', 'hash', 'pin'],
  url: ['repo', 'repository', 'remote', 'git', 'href'],
  path: ['dir', 'directory', 'folder', 'local'],
  paths: ['folders', 'dirs', 'include', 'subdir', 'subdirs', 'subpath'],
  poll: ['interval', 'every', 'refresh'],
  token: ['password', 'auth', 'pat'],
};

/** The known key a mistyped one most likely meant: another case, a near miss, or a word people use for it. */
export function didYouMean(unknown: string, known: readonly string[]): string | undefined {
  return closest(unknown, known) ?? known.find((key) => SYNONYMS[key]?.includes(unknown.toLowerCase()));
}

type AnySchema = z.core.$ZodType;

/** The object keys a schema accepts at `path`, looking through optional, default, array and pipe wrappers. */
export function knownKeys(schema: AnySchema, path: ReadonlyArray<PropertyKey>): string[] {
  let current: AnySchema | undefined = schema;
  const unwrap = (s: AnySchema): AnySchema => {
    const def = s._zod.def as { type: string; innerType?: AnySchema; in?: AnySchema };
    if (def.innerType !== undefined) return unwrap(def.innerType);
    if (def.type === 'pipe' && def.in !== undefined) return unwrap(def.in);
    return s;
  };
  for (const segment of [...path, undefined]) {
    if (current === undefined) return [];
    current = unwrap(current);
    const def = current._zod.def as { type: string; shape?: Record<string, AnySchema>; element?: AnySchema };
    if (segment === undefined) return def.type === 'object' ? Object.keys(def.shape ?? {}) : [];
    current = typeof segment === 'number' ? def.element : def.shape?.[String(segment)];
  }
  return [];
}

const TYPE_WORDS: Record<string, string> = {
  string: 'text (quote it if it looks like a number or true/false)',
  number: 'a number',
  boolean: 'true or false',
  array: 'a list',
  object: 'a mapping of keys to values',
};

const valueAt = (data: unknown, path: ReadonlyArray<PropertyKey>): unknown =>
  path.reduce<unknown>(
    (value, segment) =>
      typeof value === 'object' && value !== null && Object.hasOwn(value, segment as string)
        ? (value as Record<PropertyKey, unknown>)[segment]
        : undefined,
    data,
  );

const shown = (value: unknown) =>
  typeof value === 'string' ? JSON.stringify(value) : Array.isArray(value) ? 'a list' : String(value);

/** One zod issue in plain words; an unknown key with the key it most likely meant. */
export function plainWords(issue: z.core.$ZodIssue, data: unknown, schema: AnySchema): string[] {
  switch (issue.code) {
    case 'unrecognized_keys': {
      const known = knownKeys(schema, issue.path);
      return issue.keys.map((key) => {
        const guess = didYouMean(key, known);
        return `unknown key ${JSON.stringify(key)}${guess === undefined ? '' : `; did you mean ${JSON.stringify(guess)}?`}`;
      });
    }
    case 'invalid_type': {
      const value = valueAt(data, issue.path);
      if (value === undefined) return ['is required'];
      // A schema's own words (a duration's) say more than the type.
      if (!issue.message.startsWith('Invalid input')) return [issue.message];
      // `{x}` and `[x]` are a mapping and a list in YAML: text that starts so is quoted.
      if (issue.expected === 'string' && typeof value === 'object' && value !== null) {
        const [what, bracket] = Array.isArray(value) ? ['a list', '['] : ['a mapping', '{'];
        return [`must be text, not ${what}: quote the value if it is text starting with ${bracket}`];
      }
      const wanted = TYPE_WORDS[issue.expected] ?? issue.expected;
      return [`must be ${wanted}, not ${value === null ? 'empty' : shown(value)}`];
    }
    case 'invalid_value':
      return [`must be one of ${issue.values.map((v) => String(v)).join(', ')}`];
    case 'too_small':
      if (!issue.message.startsWith('Too small')) return [issue.message];
      if (issue.origin === 'string') return ['must not be empty'];
      if (issue.origin === 'array') return [`must list at least ${issue.minimum}`];
      return [`must be at least ${issue.minimum}`];
    case 'too_big':
      if (!issue.message.startsWith('Too big')) return [issue.message];
      return [`must be at most ${issue.maximum}`];
    default:
      return [issue.message];
  }
}

/** A config file's YAML: the path as given (every problem names it), its data, and where each key is in it. */
export interface ConfigYaml {
  file: string;
  doc: Document;
  counter: LineCounter;
  data: unknown;
}

/** Where a key path is in a config's YAML: the key itself for an unknown key, else its value. */
export function positionOf(
  yaml: ConfigYaml,
  path: ReadonlyArray<PropertyKey>,
  key?: string,
): { line: number; column: number } | undefined {
  const at = (offset: number | undefined) => {
    if (offset === undefined) return undefined;
    const { line, col } = yaml.counter.linePos(offset);
    return { line, column: col };
  };
  // The deepest node that exists along the path: a missing key is reported where its parent is.
  for (let depth = path.length; depth >= 0; depth--) {
    const node = yaml.doc.getIn(path.slice(0, depth) as unknown[], true) as Node | undefined;
    if (node === undefined || node === null) continue;
    if (key !== undefined && depth === path.length && isMap(node)) {
      const pair = node.items.find((item) => isPair(item) && isScalar(item.key) && item.key.value === key);
      if (pair !== undefined && isScalar(pair.key)) return at(pair.key.range?.[0]);
    }
    return at(node.range?.[0]);
  }
  return undefined;
}

/** A problem at a key path of a config's YAML, as one line of a ConfigError. */
export function problemAt(yaml: ConfigYaml, path: ReadonlyArray<PropertyKey>, message: string): string {
  return formatProblem(yaml.file, { ...positionOf(yaml, path), key: keyPath(path), message });
}
