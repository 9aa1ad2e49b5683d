import type { Frontmatter } from './frontmatter.ts';
import { MAX_COMPATIBILITY_LENGTH, MAX_DESCRIPTION_LENGTH, MAX_NAME_LENGTH } from './limits.ts';
import type { ProblemReason } from '../shared/reasons.ts';

/** Agent Skills: lowercase letters, digits and single hyphens, not at either end. */
export const SKILL_NAME_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

export interface RuleViolation {
  reason: ProblemReason;
  detail: string;
  /** The frontmatter key it is about. */
  key: string;
}

/** Characters as the spec counts them: code points, not UTF-16 units. */
export function countCharacters(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}

export function isValidName(name: unknown): name is string {
  return typeof name === 'string' && name.length <= MAX_NAME_LENGTH && SKILL_NAME_PATTERN.test(name);
}

/** The Agent Skills frontmatter rules, in a fixed order; empty when the frontmatter is valid. */
export function frontmatterViolations(frontmatter: Frontmatter): RuleViolation[] {
  const violations: RuleViolation[] = [];
  const { name, description, compatibility, metadata } = frontmatter;
  if (name === undefined || name === null)
    violations.push({ reason: 'name-missing', detail: 'the frontmatter has no "name"', key: 'name' });
  else if (!isValidName(name)) {
    violations.push({
      key: 'name',
      reason: 'name-invalid',
      detail: `name ${JSON.stringify(name)} must be 1-${MAX_NAME_LENGTH} characters of a-z, 0-9 and single hyphens, not starting or ending with a hyphen`,
    });
  }
  if (description === undefined || description === null) {
    violations.push({
      reason: 'description-missing',
      detail: 'the frontmatter has no "description"',
      key: 'description',
    });
  } else if (
    typeof description !== 'string' ||
    description.trim() === '' ||
    countCharacters(description) > MAX_DESCRIPTION_LENGTH
  ) {
    const length =
      typeof description === 'string'
        ? `${countCharacters(description)} characters`
        : `a ${typeof description}`;
    violations.push({
      key: 'description',
      reason: 'description-invalid',
      detail: `description must be a string of 1-${MAX_DESCRIPTION_LENGTH} characters (got ${length})`,
    });
  }
  if (
    compatibility !== undefined &&
    (typeof compatibility !== 'string' ||
      compatibility === '' ||
      countCharacters(compatibility) > MAX_COMPATIBILITY_LENGTH)
  ) {
    violations.push({
      key: 'compatibility',
      reason: 'compatibility-invalid',
      detail: `compatibility must be a string of 1-${MAX_COMPATIBILITY_LENGTH} characters`,
    });
  }
  if (metadata !== undefined && !isStringMap(metadata)) {
    violations.push({
      reason: 'metadata-invalid',
      detail: 'metadata must map strings to strings',
      key: 'metadata',
    });
  }
  return violations;
}

function isStringMap(value: unknown): boolean {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    Object.values(value).every((item) => typeof item === 'string')
  );
}
