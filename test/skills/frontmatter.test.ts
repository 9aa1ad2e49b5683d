import { describe, expect, it } from 'vitest';
import { MAX_FRONTMATTER_BYTES, parseSkillMd } from '../../src/skills/index.ts';

const md = (text: string) => new TextEncoder().encode(text);

describe('parseSkillMd', () => {
  it('parses the frontmatter verbatim and returns the body', () => {
    const result = parseSkillMd(
      md('---\nname: pdf\ndescription: "Fill: forms"\nmetadata:\n  version: "1.2"\n---\n# Body\n'),
    );
    expect(result).toEqual({
      ok: true,
      frontmatter: { name: 'pdf', description: 'Fill: forms', metadata: { version: '1.2' } },
      body: '# Body\n',
      lines: { name: 2, description: 3, metadata: 4 },
    });
  });

  it('accepts a BOM and CRLF line ends', () => {
    const result = parseSkillMd(md('\uFEFF---\r\nname: pdf\r\ndescription: d\r\n---\r\nbody'));
    expect(result).toEqual({
      ok: true,
      frontmatter: { name: 'pdf', description: 'd' },
      body: 'body',
      lines: { name: 2, description: 3 },
      plain: true,
    });
  });

  it('uses YAML 1.2 core typing: dates and yes stay strings, numbers are numbers', () => {
    const result = parseSkillMd(
      md('---\nname: a\ndescription: d\nwhen: 2024-01-01\nflag: yes\ncount: 3\n---\n'),
    );
    expect(result.ok && result.frontmatter).toEqual({
      name: 'a',
      description: 'd',
      when: '2024-01-01',
      flag: 'yes',
      count: 3,
    });
  });

  it.each([
    ['missing opening line', 'name: a\n', 'frontmatter-missing', 1],
    ['no closing line', '---\nname: a\n', 'frontmatter-unclosed', 1],
    ['anchors and aliases', '---\nname: a\ndescription: &n b\nx: *n\n---\n', 'frontmatter-invalid', 3],
    ['explicit tags', '---\nname: !!str a\ndescription: d\n---\n', 'frontmatter-invalid', 2],
    ['a sequence instead of a mapping', '---\n- a\n- b\n---\n', 'frontmatter-invalid', undefined],
    ['duplicate keys', '---\nname: a\ndescription: d\nname: b\n---\n', 'frontmatter-invalid', 4],
    // An unclosed flow sequence is found where the frontmatter ends.
    ['syntax errors', '---\nname: a\ndescription: d\ntags: [a\n---\n', 'frontmatter-invalid', 5],
    ['a bad indent', '---\nname: a\ndescription: d\n  x: 1\n---\n', 'frontmatter-invalid', 3],
    ['non-finite numbers', '---\nname: a\ndescription: d\nx: .inf\n---\n', 'frontmatter-invalid', undefined],
  ])('refuses %s, with the line in SKILL.md where one applies', (_what, text, reason, line) => {
    const result = parseSkillMd(md(text));
    expect(result.ok ? 'ok' : [result.reason, result.line]).toEqual([reason, line]);
  });

  it('refuses bytes that are not UTF-8', () => {
    const result = parseSkillMd(new Uint8Array([0x2d, 0x2d, 0x2d, 0x0a, 0xff, 0x0a]));
    expect(result.ok ? 'ok' : result.reason).toBe('skill-md-not-utf8');
  });

  it(`refuses frontmatter over ${MAX_FRONTMATTER_BYTES} bytes before parsing it`, () => {
    expect(MAX_FRONTMATTER_BYTES).toBe(65_536);
    const big = `---\nname: a\ndescription: d\nx: "${'y'.repeat(MAX_FRONTMATTER_BYTES)}"\n---\n`;
    const result = parseSkillMd(md(big));
    expect(result.ok ? 'ok' : result.reason).toBe('frontmatter-too-large');
  });

  it.each([
    [
      'a ": " in a plain value',
      'description: Use when: the user asks for a report on anything at all, in any format.',
      'YAML reads the ": " in the value of "description" as the start of a mapping; quote the value: ' +
        "description: 'Use when: the user asks for a report on anything at all, i…",
    ],
    [
      'text after the closing quote',
      'description: "Word" files.',
      `the value of "description" goes on after the quote that closes it; quote the value: description: '"Word" files.'`,
    ],
    [
      'a list with text after it',
      'argument-hint: [type] [url]',
      `YAML reads the value of "argument-hint" as a list, and text follows it; quote the value: argument-hint: '[type] [url]'`,
    ],
    [
      'a reserved first character',
      'description: `jq` is needed',
      'the value of "description" starts with "`", which YAML reserves; quote the value: description: \'`jq` is needed\'',
    ],
  ])('says what to do about %s, at the line of its value', (_what, line, detail) => {
    const result = parseSkillMd(md(`---\nname: a\nlicense: MIT\n${line}\n---\n`));
    expect(result).toEqual({ ok: false, reason: 'frontmatter-invalid', detail, line: 4 });
  });
});
