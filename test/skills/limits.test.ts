import { SKILL_LIMITS } from '@modelcontextprotocol/server/ext/skills';
import { describe, expect, it } from 'vitest';
import {
  LISTED_FILE_COST,
  MAX_LISTED_BYTES,
  MAX_SKILL_BYTES,
  MAX_SKILL_FILES,
} from '../../src/skills/index.ts';

describe('limits', () => {
  it('are the extension limits (512 files, 16 MiB per skill), as the SDK has them', () => {
    expect([MAX_SKILL_FILES, MAX_SKILL_BYTES]).toEqual([512, 16_777_216]);
    expect({ files: SKILL_LIMITS.files, bytes: SKILL_LIMITS.bytes }).toEqual({
      files: MAX_SKILL_FILES,
      bytes: MAX_SKILL_BYTES,
    });
  });

  it('bound what the skills of one commit list in all: 64 MiB, 64 bytes a file besides its path', () => {
    expect([MAX_LISTED_BYTES, LISTED_FILE_COST]).toEqual([67_108_864, 64]);
  });
});
