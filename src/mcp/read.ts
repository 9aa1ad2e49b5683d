import type { FileReader } from '../catalog/index.ts';
import { GitError } from '../git/index.ts';
import { byteLru } from '../shared/byteLru.ts';
import type { Logger } from '../shared/log.ts';
import { messageOf } from '../shared/text.ts';
import { internalError } from './errors.ts';

/** Bytes of recently read blobs kept at most, all together. */
export const READ_CACHE_BYTES = 32 * 1024 * 1024;
/** A blob larger than this is read from the store every time. */
export const READ_CACHE_MAX_BLOB = 1024 * 1024;

/**
 * Reads bytes, checked by the namespace against the size and digest the manifest publishes; -32603 when they
 * cannot be read or differ. Checked bytes are kept by their digest (least recently read dropped first).
 */
export function verifiedReader(logger: Logger, cacheBytes = READ_CACHE_BYTES): FileReader {
  const cached = byteLru<Uint8Array>(cacheBytes, READ_CACHE_MAX_BLOB, (bytes) => bytes.byteLength);
  return async (ns, { uri, file }) => {
    const known = cached.get(file.digest);
    if (known !== undefined) return known;
    const where = { source: ns.source, commit: ns.commit, path: file.path };
    let bytes: Uint8Array;
    try {
      bytes = await ns.readBlob(file.blob);
    } catch (error) {
      logger.error({ ...where, err: messageOf(error) }, 'blob read failed');
      const damaged = error instanceof GitError && error.code === 'source-store-damaged';
      throw internalError(
        `internal error reading ${uri}${damaged ? ': stored bytes do not match the index' : ''}`,
      );
    }
    cached.set(file.digest, bytes);
    return bytes;
  };
}
