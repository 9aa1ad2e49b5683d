import { SKILL_LIMITS } from '@modelcontextprotocol/server/ext/skills';
import { describe, expect, it } from 'vitest';
import { MAX_SKILL_BYTES, MAX_SKILL_FILES } from '../../src/skills/index.ts';

describe('limits', () => {
  it('are the extension limits (512 files, 16 MiB per skill), as the SDK has them', () => {
    expect([MAX_SKILL_FILES, MAX_SKILL_BYTES]).toEqual([512, 16_777_216]);
    expect({ files: SKILL_LIMITS.files, bytes: SKILL_LIMITS.bytes }).toEqual({
      files: MAX_SKILL_FILES,
      bytes: MAX_SKILL_BYTES,
    });
  });
});
