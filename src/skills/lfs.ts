import { MAX_LFS_POINTER_BYTES } from './limits.ts';

const LFS_POINTER_START = new TextEncoder().encode('version https://git-lfs.github.com/spec/v1\n');

/** True when the bytes are a Git LFS pointer (the spec's first line), not content. */
export function isLfsPointer(bytes: Uint8Array): boolean {
  if (bytes.byteLength > MAX_LFS_POINTER_BYTES || bytes.byteLength < LFS_POINTER_START.byteLength)
    return false;
  for (let index = 0; index < LFS_POINTER_START.byteLength; index++)
    if (bytes[index] !== LFS_POINTER_START[index]) return false;
  return true;
}
