import type { Namespace } from '../catalog/index.ts';
import { digestOf } from '../index/index.ts';
import type { Logger } from '../shared/log.ts';
import { messageOf } from '../shared/text.ts';
import { internalError } from './errors.ts';
import type { ServedFile } from './snapshot.ts';

/** Reads a served file; every read (resources/read, tools, prompts) goes through one of these. */
export type FileReader = (ns: Namespace, file: ServedFile) => Promise<Uint8Array>;

/** Reads bytes and checks them against the size and digest the manifest publishes; -32603 when they differ. */
export function verifiedReader(logger: Logger): FileReader {
  return async (ns, { uri, file }) => {
    const where = { source: ns.source, commit: ns.commit, path: file.path };
    let bytes: Uint8Array;
    try {
      bytes = await ns.readBlob(file.blob);
    } catch (error) {
      logger.error({ ...where, err: messageOf(error) }, 'blob read failed');
      throw internalError(`internal error reading ${uri}`);
    }
    if (bytes.byteLength !== file.size || digestOf(bytes) !== file.digest) {
      logger.error(where, 'blob does not match its indexed digest');
      throw internalError(`internal error reading ${uri}: stored bytes do not match the index`);
    }
    return bytes;
  };
}
