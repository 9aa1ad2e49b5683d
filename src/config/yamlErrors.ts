import type { LineCounter, YAMLError } from 'yaml';
import type { ConfigProblem } from './messages.ts';

/**
 * A YAML syntax error of a config in words saying what to do, at the line where the problem starts (an unclosed
 * quote or list where it opens, not where the file ends). Errors we have no words for keep the parser's.
 */
export function yamlProblem(error: YAMLError, text: string, counter: LineCounter): ConfigProblem {
  const parser = error.message.split('\n', 1)[0]!;
  const advice = adviceFor(error, text, parser);
  const { line, col } = counter.linePos(advice?.offset ?? error.pos[0]);
  return { line, column: col, message: `not valid YAML: ${advice?.words ?? parser}` };
}

interface Advice {
  words: string;
  /** Where the problem starts, when not where the parser noticed it. */
  offset?: number;
}

function adviceFor(error: YAMLError, text: string, parser: string): Advice | undefined {
  const at = error.pos[0];
  switch (error.code) {
    case 'BAD_SCALAR_START':
    case 'BAD_ALIAS': {
      const value = valueAt(text, at);
      return {
        words: `quote the value: ${quoted(text, at, value)} (a plain value cannot start with ${value[0]})`,
      };
    }
    case 'BLOCK_AS_IMPLICIT_KEY': {
      const value = valueAt(text, at);
      if (value.includes(': '))
        return {
          words: `quote the value: ${quoted(text, at, value)} (": " inside a plain value starts a mapping)`,
        };
      return {
        words:
          'the line after this value is indented deeper than its key: indent the keys of one mapping alike (or quote a value that goes on)',
      };
    }
    case 'MULTILINE_IMPLICIT_KEY':
      return { words: 'a key must fit on one line: indent the keys of one mapping alike' };
    case 'TAB_AS_INDENT':
      return { words: 'indent with spaces: YAML does not allow tabs for indentation' };
    case 'DUPLICATE_KEY':
      return { words: `${keyAt(text, at)} is given twice in this mapping: keep one` };
    case 'MISSING_CHAR':
      return missingChar(text, at, parser);
    case 'BAD_INDENT':
      if (/flow (sequence|mapping)/i.test(parser)) return unclosedFlow(text, at, parser);
      return undefined;
    default:
      return undefined;
  }
}

/** An unclosed quote is reported where the file ends: the problem starts at the quote that opened it. */
function missingChar(text: string, at: number, parser: string): Advice | undefined {
  const quote = /Missing closing (["'])quote/.exec(parser)?.[1];
  if (quote === undefined) {
    if (parser.startsWith('Sequence item without - indicator'))
      return { words: 'indent this line as the keys above it (the keys of one mapping start at one column)' };
    return undefined;
  }
  let open = text.lastIndexOf(quote, at - 1);
  // A double-quoted value may hold \" : the opening quote is the last one not escaped.
  while (open > 0 && quote === '"' && text[open - 1] === '\\') open = text.lastIndexOf(quote, open - 1);
  if (open < 0) return undefined;
  return { words: `this ${quote} is never closed: end the value with ${quote} on its line`, offset: open };
}

/** A `[` or `{` list left open is reported where the file goes on: the problem starts at its opening bracket. */
function unclosedFlow(text: string, at: number, parser: string): Advice {
  const [open, close] = /flow mapping/i.test(parser) ? ['{', '}'] : ['[', ']'];
  let depth = 0;
  for (let i = at - 1; i >= 0; i--) {
    if (text[i] === close) depth++;
    else if (text[i] === open && depth-- === 0)
      return {
        words: `close this ${open} with ${close} (a list or mapping in brackets ends with its bracket)`,
        offset: i,
      };
  }
  return { words: `close the ${open} with ${close}` };
}

const lineAround = (text: string, at: number) => {
  const start = text.lastIndexOf('\n', at - 1) + 1;
  const end = text.indexOf('\n', at);
  return { start, text: text.slice(start, end < 0 ? undefined : end) };
};

/** The value starting at `at` as written: to the end of its line (its comment left out), or of its item in a `[…]`. */
function valueAt(text: string, at: number): string {
  const line = lineAround(text, at);
  const before = line.text.slice(0, at - line.start);
  const rest = line.text.slice(at - line.start);
  const inFlow = (before.match(/[[{]/g)?.length ?? 0) > (before.match(/[\]}]/g)?.length ?? 0);
  const value = inFlow ? rest.split(/[,\]}]/, 1)[0]! : rest.replace(/\s+#.*$/, '');
  return value.trim();
}

/** `key: "value"` as the line should read, or just `"value"` inside a `[…]` or where there is no key. */
function quoted(text: string, at: number, value: string): string {
  const line = lineAround(text, at);
  const key = /^\s*(?:-\s+)?([^\s:#[\]{},][^:#]*?):\s+$/.exec(line.text.slice(0, at - line.start))?.[1];
  return `${key === undefined ? '' : `${key}: `}${JSON.stringify(value)}`;
}

/** The key written at `at`. */
function keyAt(text: string, at: number): string {
  const line = lineAround(text, at);
  return /^[^:\s]+/.exec(line.text.slice(at - line.start))?.[0] ?? 'a key';
}
