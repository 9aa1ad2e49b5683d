import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { writeFileAtomic } from '../shared/fs.ts';
import type { SourceReason } from '../shared/reasons.ts';

/** What skillpin remembers about a source between runs (dataDir/state.json). Never holds a secret. */
export interface SourceState {
  /** The commit served (listed) last. */
  current?: string;
  /** Earlier commits still served, newest first. */
  retained: string[];
  /** When a sync of this source last finished, ISO 8601. */
  lastSync?: string;
  /** When a sync of this source last succeeded. */
  lastSuccess?: string;
  lastError?: { reason: SourceReason; detail: string; at: string };
}

export interface SyncState {
  version: 1;
  sources: Record<string, SourceState>;
}

export const stateFile = (dataDir: string) => path.join(dataDir, 'state.json');

/** The saved state; an empty one when the file is missing or unreadable (it is rebuilt by the next sync). */
export async function readState(dataDir: string): Promise<SyncState> {
  try {
    const parsed = JSON.parse(await fsp.readFile(stateFile(dataDir), 'utf8')) as SyncState;
    if (parsed?.version === 1 && typeof parsed.sources === 'object' && parsed.sources !== null) return parsed;
  } catch {
    // Missing or corrupt: start empty.
  }
  return { version: 1, sources: {} };
}

export async function writeState(dataDir: string, state: SyncState): Promise<void> {
  await writeFileAtomic(stateFile(dataDir), `${JSON.stringify(state, null, 2)}\n`);
}
