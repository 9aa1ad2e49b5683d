import { visible } from '../shared/text.ts';

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

/** Text as a person should read it in a page: markup-inert, and no character that hides or reorders others. */
export function escapeHtml(text: string): string {
  return visible(text).replace(/[&<>"']/g, (char) => ESCAPES[char]!);
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
