import { describe, expect, it } from 'vitest';
import {
  frontmatterViolations,
  MAX_COMPATIBILITY_LENGTH,
  MAX_DESCRIPTION_LENGTH,
  MAX_NAME_LENGTH,
} from '../../src/skills/index.ts';

const reasons = (frontmatter: Record<string, unknown>) =>
  frontmatterViolations(frontmatter).map((v) => v.reason);

describe('frontmatter rules', () => {
  it('names the limits the Agent Skills format sets', () => {
    expect([MAX_NAME_LENGTH, MAX_DESCRIPTION_LENGTH, MAX_COMPATIBILITY_LENGTH]).toEqual([64, 1024, 500]);
  });

  it('accepts a valid frontmatter', () => {
    expect(reasons({ name: 'a-1', description: 'd', compatibility: 'node', metadata: { k: 'v' } })).toEqual(
      [],
    );
  });

  it.each([
    [{ description: 'd' }, ['name-missing']],
    [{ name: 'Bad', description: 'd' }, ['name-invalid']],
    [{ name: '-a', description: 'd' }, ['name-invalid']],
    [{ name: 'a--b', description: 'd' }, ['name-invalid']],
    [{ name: 'a\u2011b', description: 'd' }, ['name-invalid']],
    [{ name: 'a'.repeat(65), description: 'd' }, ['name-invalid']],
    [{ name: 7, description: 'd' }, ['name-invalid']],
    [{ name: 'a' }, ['description-missing']],
    [{ name: 'a', description: '' }, ['description-invalid']],
    [{ name: 'a', description: 'x'.repeat(1025) }, ['description-invalid']],
    [{ name: 'a', description: 'd', compatibility: 'x'.repeat(501) }, ['compatibility-invalid']],
    [{ name: 'a', description: 'd', metadata: { version: 2 } }, ['metadata-invalid']],
    [{ name: 'a', description: 'd', metadata: ['x'] }, ['metadata-invalid']],
  ])('%j → %j', (frontmatter, expected) => {
    expect(reasons(frontmatter)).toEqual(expected);
  });

  it('counts characters, not UTF-16 units: 1024 emoji are a valid description', () => {
    expect(reasons({ name: 'a', description: '😀'.repeat(1024) })).toEqual([]);
  });
});
