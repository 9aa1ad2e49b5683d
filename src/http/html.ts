/** Markup made by `html`: interpolating it elsewhere keeps it as it is; every other value is escaped. */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

// Control, zero-width and bidirectional-override characters would hide or reorder what a reader sees.
const INVISIBLE =
  /[\u0000-\u001f\u007f-\u009f\u00ad\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb]/g;

/** Text as a person should read it in a page: markup-inert, and no character that hides or reorders others. */
export function escapeHtml(text: string): string {
  return text
    .replace(INVISIBLE, (char) => `\\u{${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}}`)
    .replace(/[&<>"']/g, (char) => ESCAPES[char]!);
}

const render = (value: unknown): string =>
  value instanceof Html
    ? value.text
    : Array.isArray(value)
      ? value.map(render).join('')
      : value === undefined || value === null || value === false
        ? ''
        : escapeHtml(String(value));

/** A template whose interpolated values are escaped (arrays joined, `undefined`/`null`/`false` left out). */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let text = strings[0]!;
  for (let i = 0; i < values.length; i++) text += render(values[i]) + strings[i + 1]!;
  return new Html(text);
}
