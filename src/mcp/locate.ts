import { parseSkillUri } from '../catalog/index.ts';
import { invalidParams } from './errors.ts';
import type { Snapshot } from './snapshot.ts';
import type { ServingState } from './serving.ts';

/** The snapshot serving a request URI, and the URI's canonical form (the key of every lookup in it). */
export interface Located {
  snapshot: Snapshot;
  uri: string;
  /** The served path it names, decoded ('' for the namespace root). */
  path: string;
}

/** Resolves a request URI, current or retained commit, or throws -32602 naming the URI and why not. */
export function locate(serving: ServingState, uri: string): Located {
  const parsed = parseSkillUri(uri);
  if (!parsed.ok) throw invalidParams(`${uri} is not a URI this server serves: ${parsed.problem}`, uri);
  const snapshot = serving.snapshotAt(parsed.source, parsed.commit);
  if (snapshot === undefined) {
    const known = serving.state.sources.some((source) => source.id === parsed.source);
    throw invalidParams(
      known
        ? `${uri}: source "${parsed.source}" does not serve commit ${parsed.commit}`
        : `${uri}: no source "${parsed.source}" is configured`,
      uri,
    );
  }
  return { snapshot, uri: parsed.uri, path: parsed.path };
}
