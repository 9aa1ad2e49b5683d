import { describe, expect, it } from 'vitest';
import { escapeHtml, html } from '../../src/http/html.ts';
import { relative } from '../../src/http/statusPage.ts';

describe('html', () => {
  it('escapes every interpolated value, keeps nested markup, and drops undefined, null and false', () => {
    const name = '<img src=x onerror="alert(1)">';
    const page = html`<p title="${name}">${name} & ${[html`<b>${"'q'"}</b>`, 1]}${undefined}${null}${false}</p>`;
    expect(page.text).toBe(
      '<p title="&lt;img src=x onerror=&quot;alert(1)&quot;&gt;">&lt;img src=x onerror=&quot;alert(1)&quot;&gt; & ' +
        '<b>&#39;q&#39;</b>1</p>',
    );
  });

  it('shows characters that hide or reorder text as their code points', () => {
    expect(escapeHtml('ctl\u0001.md \u202Egpj.exe zero\u200Bwidth \uFEFF')).toBe(
      'ctl\\u{0001}.md \\u{202E}gpj.exe zero\\u{200B}width \\u{FEFF}',
    );
  });
});

describe('relative times', () => {
  const now = Date.parse('2024-05-01T12:00:00.000Z');
  it.each([
    ['2024-05-01T11:59:15.000Z', '45 s ago'],
    ['2024-05-01T12:04:00.000Z', 'in 4 min'],
    ['2024-05-01T09:00:00.000Z', '3 h ago'],
    ['2024-04-21T12:00:00.000Z', '10 d ago'],
  ])('%s is %s', (iso, text) => {
    expect(relative(iso, now)).toBe(text);
  });
});
