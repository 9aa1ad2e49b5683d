import { describe, expect, it } from 'vitest';
import { checkedBySdk } from '../../src/index/hostCheck.ts';
import { parseSkillMd } from '../../src/skills/index.ts';

async function checked(frontmatter: string) {
  const bytes = new TextEncoder().encode(`---\nname: probe\ndescription: d\n${frontmatter}\n---\nbody\n`);
  const parsed = parseSkillMd(bytes);
  if (!parsed.ok) throw new Error(`not valid YAML: ${parsed.detail}`);
  return checkedBySdk(bytes, parsed);
}

describe("the MCP SDK's own entry checks over a frontmatter YAML accepts", () => {
  it.each([
    [
      'a mapping inside a flow sequence',
      'argument-hint: [optional: date]',
      'mappings inside flow collections are not supported; quote the value',
    ],
    [
      'a quoted value over two lines',
      "x: 'a\n  b'",
      'a quoted value must close on the same line (multi-line quoted values are not supported)',
    ],
    ['a complex key', 'x: 1\n? a\n: b', 'complex keys ("?") are not supported'],
    ['an empty value in a flow mapping', 'x: {a: }', 'empty value in a flow collection'],
  ])('refuses %s, naming the line the SDK names', async (_what, yaml, message) => {
    const lines = yaml.split('\n');
    const line = 4 + lines.findIndex((l) => /\[|'|\?|\{/.test(l));
    expect(await checked(yaml)).toEqual({
      ok: false,
      reason: 'frontmatter-unsupported',
      detail: `the MCP SDK's frontmatter reader, which hosts verify SKILL.md with, refuses it: line ${line}: ${message}`,
      line,
    });
  });

  it('passes what both read alike, unchanged', async () => {
    const yaml =
      'tags: [a, "b", 1]\nmeta: {a: 1, b: [2]}\nfolded: >\n  a\n\n    b\n  c\nflag: yes\nwhen: 2024-01-01';
    const result = await checked(yaml);
    expect(result.ok && result.frontmatter).toEqual({
      name: 'probe',
      description: 'd',
      tags: ['a', 'b', 1],
      meta: { a: 1, b: [2] },
      folded: 'a\n\n  b\nc\n',
      flag: 'yes',
      when: '2024-01-01',
    });
  });

  it('leaves a frontmatter that breaks our own rules to them', async () => {
    const bytes = new TextEncoder().encode('---\nname: Bad_Name\ndescription: d\nx: [a: b]\n---\n');
    const parsed = parseSkillMd(bytes);
    expect(parsed.ok && (await checkedBySdk(bytes, parsed))).toBe(parsed);
  });
});
