import { describe, expect, it } from 'vitest';
import {
  encodePath,
  encodeSegment,
  namespaceUri,
  parseSkillUri,
  skillFileUri,
  skillMdUri,
  sourceIdOf,
} from '../../src/catalog/index.ts';

const C = 'a'.repeat(40);

describe('skill URIs', () => {
  it('builds skill://<source>/<commit>/<path> with names percent-encoded once', () => {
    expect(namespaceUri('src', C, 'skills/x/templates/Q&A notes.md')).toBe(
      `skill://src/${C}/skills/x/templates/Q&A%20notes.md`,
    );
    expect(namespaceUri('src', C, 'skills/x/résumé #1.md')).toBe(
      `skill://src/${C}/skills/x/r%C3%A9sum%C3%A9%20%231.md`,
    );
    expect(namespaceUri('src', C)).toBe(`skill://src/${C}`);
  });

  it('encodes names that look like escapes or dot segments so they decode back exactly', () => {
    expect(encodeSegment('a%2Fb')).toBe('a%252Fb');
    expect(encodeSegment('%2e%2e')).toBe('%252e%252e');
    expect(encodeSegment('..')).toBe('%2E%2E');
    for (const name of ['a%2Fb', '%2e%2e', 'Q&A notes.md', 'x?y#z', '100%']) {
      const uri = namespaceUri('src', C, `d/${name}`);
      expect(parseSkillUri(uri)).toEqual({ ok: true, source: 'src', commit: C, path: `d/${name}`, uri });
    }
  });

  it('encodes a path segment by segment, a path of kept characters without dot segments as it is', () => {
    const paths = [
      'skills/pdf-forms/SKILL.md',
      "a/b_c/(x)!$&'*+,;=@[]|~:d.e",
      'a/./b',
      'a/../b',
      '../x',
      'a/..',
      '.',
      '..',
      '.hidden/..dots../x.',
      'a//b',
      'Q&A notes.md',
      'résumé/%41',
      '',
    ];
    expect(paths.map(encodePath)).toEqual(paths.map((path) => path.split('/').map(encodeSegment).join('/')));
    expect(paths.slice(0, 2).map(encodePath)).toEqual(paths.slice(0, 2));
    expect(encodePath('.hidden/..dots../x.')).toBe('.hidden/..dots../x.');
    expect(encodePath('a/../b')).toBe('a/%2E%2E/b');
  });

  it('reads the source id of an accepted URI as parsing it would', () => {
    for (const uri of [
      `skill://src/${C}`,
      `skill://policies.v2.1.0/${C}/refunds/SKILL.md`,
      namespaceUri('a-b', C, 'd/Q&A notes.md'),
    ]) {
      const parsed = parseSkillUri(uri);
      expect([parsed.ok, sourceIdOf(uri)]).toEqual([true, parsed.ok ? parsed.source : undefined]);
    }
  });

  it('decodes exactly once', () => {
    expect(parseSkillUri(`skill://src/${C}/d/a%252Fb`)).toEqual({
      ok: true,
      source: 'src',
      commit: C,
      path: 'd/a%2Fb',
      uri: `skill://src/${C}/d/a%252Fb`,
    });
  });

  it('gives the canonical form of a URI written with other escapes, the key every lookup uses', () => {
    expect(parseSkillUri(`skill://src/${C}/skills/%70df/r%c3%a9sum%c3%a9%20%231.md`)).toEqual({
      ok: true,
      source: 'src',
      commit: C,
      path: 'skills/pdf/résumé #1.md',
      uri: `skill://src/${C}/skills/pdf/r%C3%A9sum%C3%A9%20%231.md`,
    });
  });

  it('builds SKILL.md and file URIs of a skill from its served folder', () => {
    expect(skillMdUri('src', C, 'skills/pdf')).toBe(`skill://src/${C}/skills/pdf/SKILL.md`);
    expect(skillFileUri('src', C, 'skills/pdf', 'references/Q&A notes.md')).toBe(
      `skill://src/${C}/skills/pdf/references/Q&A%20notes.md`,
    );
  });

  it.each([
    [`skill://src/${C}/a/../b`, 'dot segments are not allowed'],
    [`skill://src/${C}/a/%2e%2e/b`, 'dot segments are not allowed'],
    [`skill://src/${C}/a/%2E/b`, 'dot segments are not allowed'],
    [`skill://src/${C}/a%2Fb`, 'a segment decodes to "/", "\\" or NUL'],
    [`skill://src/${C}/a%00`, 'a segment decodes to "/", "\\" or NUL'],
    [`skill://src/${C}/a%5Cb`, 'a segment decodes to "/", "\\" or NUL'],
    [`skill://src/${C}/a\\b`, 'a backslash is not allowed'],
    [`skill://src/${C}/a?x`, 'a query or fragment is not allowed'],
    [`skill://src/${C}/a#x`, 'a query or fragment is not allowed'],
    [`skill://src/${C}/a//b`, 'empty path segments are not allowed'],
    [`skill://src/${C}/a%zz`, 'a segment has a malformed percent-escape'],
    [`https://src/${C}/a`, 'only skill:// URIs are served'],
    ['skill://SRC/x', 'the authority is not a configured source id'],
    ['skill://user@src/x', 'the authority is not a configured source id'],
    [`skill://src:80/${C}`, 'the authority is not a configured source id'],
    ['skill://src/abc', 'the second segment must be a full 40-hex commit'],
    ['skill://src', 'the URI names no commit'],
  ])('refuses %s', (uri, problem) => {
    expect(parseSkillUri(uri)).toEqual({ ok: false, problem });
  });
});
