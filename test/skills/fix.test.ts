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
    expect(fixFrontmatter('---\ndescription: D.\n---\nbody\n', 'My Skill')).toEqual({
      ok: true,
      text: '---\nname: my-skill\ndescription: D.\n---\nbody\n',
      changes: [{ key: 'name', from: undefined, to: 'my-skill' }],
    });
    expect(fixFrontmatter('---\nname: True\ndescription: D.\n---\n', 'true')).toEqual({
      ok: true,
      text: '---\nname: "true"\ndescription: D.\n---\n',
      changes: [{ key: 'name', from: true, to: 'true' }],
    });
  });

  it('writes a cut description double-quoted when plain would not read back as the text', () => {
    const long = `Use it: ${'x. '.repeat(400)}`;
    const fixed = fixFrontmatter(`---\nname: a\ndescription: ${JSON.stringify(long)}\n---\n`, 'a');
    expect(fixed).toEqual({
      ok: true,
      text: `---\nname: a\ndescription: ${JSON.stringify(cutDescription(long))}\n---\n`,
      changes: [{ key: 'description', from: long, to: cutDescription(long) }],
    });
  });

  it('says why it cannot fix', () => {
    expect(fixFrontmatter('---\nname: ok\ndescription: D.\n---\n', 'ok')).toEqual({
      ok: false,
      detail: 'nothing to fix in its name or description',
    });
    expect(fixFrontmatter('---\nname: Bad\ndescription: D.\n---\n', '---')).toEqual({
      ok: false,
      detail: 'folder "---" implies no name',
    });
  });
});
