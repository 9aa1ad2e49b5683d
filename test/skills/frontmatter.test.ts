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
});
