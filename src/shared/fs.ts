import { promises as fsp } from 'node:fs';
import path from 'node:path';

/** Writes `text` so that readers see the old file or the new one, never a part: temp file, fsync, rename. */
export async function writeFileAtomic(file: string, text: string): Promise<void> {
  await fsp.mkdir(path.dirname(file), { recursive: true });
  const temp = `${file}.${process.pid}.${Date.now()}.tmp`;
  const handle = await fsp.open(temp, 'w');
  try {
    await handle.writeFile(text);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await fsp.rename(temp, file);
}
