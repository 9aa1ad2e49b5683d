import { describe, expect, it } from 'vitest';
import { cutDescription, fixFrontmatter, kebabName } from '../../src/skills/fix.ts';

describe('fixFrontmatter', () => {
  it('names a skill from its folder in kebab case, at most 64 characters', () => {
    expect(kebabName('Ahrefs Automation')).toBe('ahrefs-automation');
    expect(kebabName('-2chat_automation-')).toBe('2chat-automation');
    expect(kebabName('pdfForms')).toBe('pdf-forms');
    expect(kebabName(`${'a'.repeat(63)}-b`)).toBe('a'.repeat(63));
  });

  it('cuts a description after the last sentence that fits, or at a word when none does', () => {
    expect(cutDescription(`${'Short one. '.repeat(100)}`)).toBe('Short one. '.repeat(93).trimEnd());
    expect(cutDescription('word '.repeat(300))).toBe('word '.repeat(204).trimEnd());
  });

  it('adds a missing name as the first line and quotes a name YAML would read as another type', () => {
    expect(fixFrontmatter('---\ndescription: D.\n---\nbody\n', { folder: 'My Skill', root: true })).toEqual({
      ok: true,
      text: '---\nname: my-skill\ndescription: D.\n---\nbody\n',
      changes: [{ kind: 'value', key: 'name', from: undefined, to: 'my-skill' }],
    });
    expect(
      fixFrontmatter('---\nname: True\ndescription: D.\n---\n', { folder: 'true', root: false }),
    ).toEqual({
      ok: true,
      text: '---\nname: "true"\ndescription: D.\n---\n',
      changes: [{ kind: 'value', key: 'name', from: true, to: 'true' }],
    });
  });

  it('writes a cut description double-quoted when plain would not read back as the text', () => {
    const long = `Use it: ${'x. '.repeat(400)}`;
    const fixed = fixFrontmatter(`---\nname: a\ndescription: ${JSON.stringify(long)}\n---\n`, {
      folder: 'a',
      root: false,
    });
    expect(fixed).toEqual({
      ok: true,
      text: `---\nname: a\ndescription: ${JSON.stringify(cutDescription(long))}\n---\n`,
      changes: [{ kind: 'value', key: 'description', from: long, to: cutDescription(long) }],
    });
  });

  it('says why it cannot fix', () => {
    expect(fixFrontmatter('---\nname: ok\ndescription: D.\n---\n', { folder: 'ok', root: false })).toEqual({
      ok: false,
      detail: 'nothing to fix in its name or description',
    });
    expect(fixFrontmatter('---\nname: Bad\ndescription: D.\n---\n', { folder: '---', root: true })).toEqual({
      ok: false,
      detail: 'folder "---" implies no name',
    });
  });

  it('names a skill after its folder, and refuses a folder that is not a valid name: no name could match it', () => {
    const text = '---\nname: Capsule CRM\ndescription: D.\n---\n';
    expect(fixFrontmatter(text, { folder: 'capsule-crm', root: false })).toEqual({
      ok: true,
      text: '---\nname: capsule-crm\ndescription: D.\n---\n',
      changes: [{ kind: 'value', key: 'name', from: 'Capsule CRM', to: 'capsule-crm' }],
    });
    expect(fixFrontmatter(text, { folder: 'capsule_crm', root: false })).toEqual({
      ok: false,
      detail:
        'its folder "capsule_crm" is not a valid name, so no name can match it: rename the folder (to "capsule-crm", say) and set the name to match',
    });
    // The repository's root is served under its name, whatever its folder is called.
    expect(fixFrontmatter(text, { folder: 'Capsule_CRM', root: true })).toMatchObject({
      ok: true,
      text: '---\nname: capsule-crm\ndescription: D.\n---\n',
    });
  });

  it.each([
    [
      'a ": " in a plain value',
      'description: Use when: the user asks.',
      "description: 'Use when: the user asks.'",
    ],
    ['text after the closing quote', 'description: "把脉" — a check.', `description: '"把脉" — a check.'`],
    [
      'quotes inside quotes',
      'description: "Use "Word" files, it\'s quick."',
      `description: 'Use "Word" files, it''s quick.'`,
    ],
    ['an apostrophe', "description: it's: fine", 'description: "it\'s: fine"'],
    ['a list with text after it', 'description: [OLD] Use b.', "description: '[OLD] Use b.'"],
    ['a reserved first character', 'description: @mention the bot', "description: '@mention the bot'"],
  ])('quotes a value YAML misreads (%s), its text kept as written', (_case, line, quoted) => {
    const fixed = fixFrontmatter(`---\nname: a\n${line}\nlicense: MIT\n---\nbody\n`, {
      folder: 'a',
      root: false,
    });
    expect(fixed).toEqual({
      ok: true,
      text: `---\nname: a\n${quoted}\nlicense: MIT\n---\nbody\n`,
      changes: [{ kind: 'quote', key: 'description', line: 3 }],
    });
  });

  it('quotes every line YAML misreads, then fixes the name', () => {
    const text = '---\nname: My Skill\ndescription: Use when: asked.\nargument-hint: [a] [b]\n---\n';
    expect(fixFrontmatter(text, { folder: 'my-skill', root: false })).toEqual({
      ok: true,
      text: "---\nname: my-skill\ndescription: 'Use when: asked.'\nargument-hint: '[a] [b]'\n---\n",
      changes: [
        { kind: 'quote', key: 'description', line: 3 },
        { kind: 'quote', key: 'argument-hint', line: 4 },
        { kind: 'value', key: 'name', from: 'My Skill', to: 'my-skill' },
      ],
    });
  });

  it('says at which line a YAML error it cannot mend by quoting stands', () => {
    const folder = { folder: 'a', root: false };
    expect(fixFrontmatter('---\nname: a\nargument-hint: [a] [b]\n---\n', folder)).toEqual({
      ok: false,
      detail: 'with the fix, still: the frontmatter has no "description"',
    });
    // YAML folds a value over lines: quoting the first line alone would change the text.
    expect(fixFrontmatter('---\nname: a\ndescription: Use when:\n  asked.\n---\n', folder)).toEqual({
      ok: false,
      detail:
        'line 3: YAML reads the ": " in the value of "description" as the start of a mapping; quote the value, all of its lines',
    });
    // A list below the top was meant as a list: quoting would make it a string.
    const tags = '---\nname: a\ndescription: Use when: asked.\nmetadata:\n  tags: [a, b]  - x\n---\n';
    expect(fixFrontmatter(tags, folder)).toEqual({
      ok: false,
      detail: 'line 5: YAML reads the value of "tags" as a list, and text follows it; remove what follows it',
    });
    expect(fixFrontmatter('---\nname: a\ndescription: "a \\"b" c"\n---\n', folder)).toEqual({
      ok: false,
      detail:
        'line 3: the value of "description" goes on after the quote that closes it; escape the quotes inside it',
    });
  });
});
