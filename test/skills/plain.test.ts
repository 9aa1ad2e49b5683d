import { skillEntry } from '@modelcontextprotocol/server/ext/skills';
import { describe, expect, it } from 'vitest';
import { parseSkillMd, readPlainMapping, readYamlMapping } from '../../src/skills/frontmatter.ts';

/** What the MCP SDK's frontmatter reader (the one hosts verify with) reads, or its error message. */
async function sdkReads(yaml: string): Promise<unknown> {
  const skillMd = new TextEncoder().encode(`---\n${yaml}---\n`);
  try {
    return (await skillEntry('skill', { 'SKILL.md': skillMd })).frontmatter;
  } catch (error) {
    return (error as Error).message;
  }
}

/** Asserts that where the plain reader answers, YAML and the SDK read exactly the same. */
async function expectAllAgree(yaml: string): Promise<void> {
  const plain = readPlainMapping(yaml);
  if (plain === undefined) return;
  const parsed = readYamlMapping(yaml);
  expect(parsed, yaml).toEqual({ ok: true, value: plain.value, lines: plain.lines });
  expect(await sdkReads(yaml), yaml).toEqual(plain.value);
}

const PLAIN = [
  'description: Fill PDF forms.',
  "description: it's [x] {y}, 50% @home `code` a-b a:b a#b ~x",
  'description: café — 日本語 ✓',
  'description: yes',
  'description: No',
  'description: Infinity',
  'description: e5',
  'description: x',
  'license: Apache-2.0',
  'allowed-tools: Bash(git:*) Read',
  'metadata.version: v1',
  'description: a\\nb',
];

const NOT_PLAIN = [
  'description: Use it when: never',
  'description: a: b',
  'description: a #b',
  'description: null',
  'description: True',
  'description: 1.0',
  'description: "quoted"',
  "description: 'quoted'",
  'description: -x',
  'description: [x]',
  'description: x:',
  'description: x ',
  'description:\tx',
  'description: x\ty',
  'description: x\u0085y',
  'description: x\u0007y',
  'description:  x',
  'description: >',
  'description: &anchor x',
  'description: *alias',
  'description: !tag x',
  'description:',
  'true: x',
  'Null: x',
  '_key: x',
  '  indented: x',
  '# a comment',
  '',
  'description: x\ndescription: y',
  `${'k'.repeat(65)}: x`,
];

describe('plain frontmatter, read without a YAML parser', () => {
  it.each(PLAIN)('reads %j as YAML and the MCP SDK read it', async (line) => {
    const yaml = `name: skill\n${line.startsWith('description:') ? '' : 'description: d\n'}${line}\n`;
    const plain = readPlainMapping(yaml);
    expect(plain).toBeDefined();
    await expectAllAgree(yaml);
  });

  it.each(NOT_PLAIN)('leaves %j to the YAML parser', (line) => {
    expect(readPlainMapping(`name: skill\n${line}\n`)).toBeUndefined();
  });

  it('agrees with YAML and the SDK on 3,000 generated values', async () => {
    // Seeded: the same values every run. Pieces chosen to meet every rule of the plain form.
    const pieces = [
      'a',
      'Z',
      'é',
      '日',
      '1',
      ' ',
      ':',
      ': ',
      ' #',
      '#',
      '-',
      "'",
      '"',
      '[',
      ']',
      '{',
      '}',
      ',',
      '&',
      '*',
      '!',
      '|',
      '>',
      '%',
      '@',
      '`',
      '\t',
      '\\',
      '.',
      '~',
      '?',
      'null',
      'true',
      '\u00a0',
      '\u0085',
      '\u2028',
      '\ufeff',
    ];
    let seed = 42;
    const next = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    let accepted = 0;
    for (let i = 0; i < 3_000; i++) {
      let value = next() < 0.5 ? 'a' : '';
      const length = 1 + Math.floor(next() * 6);
      for (let j = 0; j < length; j++) value += pieces[Math.floor(next() * pieces.length)];
      const yaml = `name: skill\ndescription: ${value}\n`;
      if (readPlainMapping(yaml) !== undefined) accepted++;
      await expectAllAgree(yaml);
    }
    // Both sides of the rule are exercised.
    expect(accepted).toBeGreaterThan(300);
    expect(accepted).toBeLessThan(2_700);
  });

  it('marks a plain SKILL.md so the SDK is not asked again', () => {
    const parsed = parseSkillMd(
      new TextEncoder().encode('---\nname: pdf\ndescription: Fill forms.\n---\nbody\n'),
    );
    expect(parsed).toEqual({
      ok: true,
      frontmatter: { name: 'pdf', description: 'Fill forms.' },
      body: 'body\n',
      lines: { name: 2, description: 3 },
      plain: true,
    });
  });
});
