import { readdirSync } from 'node:fs';
import path from 'node:path';
import type { Namespace, SourceFailure } from '../catalog/index.ts';
import type { Config, SourceConfig } from '../config/index.ts';
import type { CoordinationStatus, SourceReplicas } from './coordination.ts';
import type { SkillProblem, SourceReason } from '../shared/reasons.ts';
import { leaseHolder } from './membership.ts';
import { liveProcesses } from './processes.ts';
import { rebuilt } from './retention.ts';
import { openSource } from './source.ts';
import { EMPTY_LISTING, expandedSources, type GroupListing, isRefsSource } from './refGroup.ts';
import { openStateFile } from './state.ts';

/** One commit as reported: what its index says (only `commit` when its index file is gone). */
export interface CommitStatus {
  commit: string;
  commitTime?: string;
  skills?: number;
  problems?: SkillProblem[];
  /** Its search index, once built (live status only): milliseconds to build, skills and distinct terms indexed. */
  search?: { buildMs: number; skills: number; terms: number; unread: number };
}

export interface SourceStatus {
  id: string;
  /** URL without credentials, or `local:<folder>`. */
  repository: string;
  /** The branch, tag or ref followed; `null` for a source pinned to a commit. */
  ref: string | null;
  /** The commit listed, or `null` when the source has served nothing yet. */
  current: CommitStatus | null;
  /** Earlier commits still served (not listed), newest first. */
  retained: CommitStatus[];
  /** A sync of the source is running now (always false when read from dataDir). */
  syncing: boolean;
  lastSync: string | null;
  lastSuccess: string | null;
  /** When the next poll or retry is due; `null` when none is set (a pinned commit, a sync running, read from dataDir). */
  nextSync: string | null;
  /** Why the latest sync failed; `null` when it succeeded. */
  lastError: { reason: SourceReason; detail: string; at: string } | null;
  /** A `refs:` source: its patterns, the ids of the refs it serves (deleted ones kept included), and the refs it refuses. */
  refs?: { patterns: string[]; served: string[]; problems: SkillProblem[] };
  /** A ref of a `refs:` source: that source's id. */
  group?: string;
  /** With `coordination:`: the commit each replica serves, who polls, and when they last agreed (live status only). */
  replicas?: SourceReplicas;
}

/** A process using the dataDir, as `skillpin status` reads it from its process file. */
export interface ProcessStatus {
  pid: number;
  host: string;
  command: 'serve' | 'sync';
  /** How a serve answers: `stdio` or `http`; `null` for a sync. */
  transport: 'stdio' | 'http' | null;
  /** When it started using the dataDir, ISO 8601. */
  since: string;
  /** Its config file. */
  config: string;
  /** The sources whose lease it holds: it syncs them and publishes for the others. */
  leases: string[];
}

/** `GET /status` (live) and `skillpin status --json` (from dataDir). Version 2: fields are only ever added. */
export interface StatusReport {
  version: 2;
  /** Every configured source, in configuration order. */
  sources: SourceStatus[];
  /** The sources whose latest sync failed (what they served before keeps serving). */
  failures: SourceFailure[];
  /** Every live process using the dataDir, oldest first (`skillpin status` only). */
  processes?: ProcessStatus[];
  /** With `coordination:`: whether Redis answers (live status only). */
  coordination?: CoordinationStatus;
}

export const refOf = (source: SourceConfig): string | null =>
  source.target.kind === 'ref' ? source.target.ref : null;

/** What a status line adds for a `refs:` source (its listing) or one of its refs (the source it belongs to). */
export function refsStatusOf(
  source: SourceConfig,
  listing: GroupListing | undefined,
): Pick<SourceStatus, 'refs' | 'group'> {
  if (source.group !== undefined) return { group: source.group.id };
  if (source.target.kind !== 'refs') return {};
  const { refs, gone, problems } = listing ?? EMPTY_LISTING;
  return {
    refs: {
      patterns: source.target.patterns,
      served: [...refs, ...gone].map((r) => r.id),
      problems,
    },
  };
}

export function commitStatusOf(ns: Namespace): CommitStatus {
  return {
    commit: ns.commit,
    commitTime: ns.commitTime,
    skills: ns.skills.length,
    problems: [...ns.problems],
  };
}

export function reportOf(sources: SourceStatus[]): StatusReport {
  const failures = sources.flatMap((s) =>
    s.lastError === null
      ? []
      : [
          {
            id: s.id,
            reason: s.lastError.reason,
            detail: s.lastError.detail,
            ...(s.group === undefined ? {} : { group: s.group }),
          },
        ],
  );
  return { version: 2, sources, failures };
}

/**
 * What the last run recorded in dataDir, read without opening a repository or touching the network. A source
 * state.json does not name (it is missing or corrupt) is shown as a restart would rebuild it.
 */
export async function statusReport(config: Config): Promise<StatusReport> {
  const { state } = await openStateFile(config.dataDir).read();
  const sources: SourceStatus[] = [];
  const listings = new Map(
    config.sources.filter(isRefsSource).map((s) => [s.id, state.sources[s.id]?.listing ?? EMPTY_LISTING]),
  );
  for (const sourceConfig of expandedSources(config.sources, listings)) {
    const source = openSource(sourceConfig, { dataDir: config.dataDir });
    const saved = state.sources[source.id];
    let current: CommitStatus | undefined;
    let retained: CommitStatus[];
    if (saved === undefined) {
      // Each held commit's index file is read once: its status is what ordering it needed.
      const held = await Promise.all((await source.held()).map((commit) => source.status(commit)));
      const pinned = sourceConfig.target.kind === 'commit' ? sourceConfig.target.commit : undefined;
      ({ current, retained } = rebuilt(held, pinned, sourceConfig.keep));
    } else {
      current = saved.current === undefined ? undefined : await source.status(saved.current);
      retained = await Promise.all(saved.retained.map((commit) => source.status(commit)));
    }
    sources.push({
      id: source.id,
      repository: source.origin.repository,
      ref: refOf(sourceConfig),
      current: current ?? null,
      retained,
      syncing: false,
      lastSync: saved?.lastSync ?? null,
      lastSuccess: saved?.lastSuccess ?? null,
      nextSync: null,
      lastError: saved?.lastError ?? null,
      ...refsStatusOf(sourceConfig, listings.get(sourceConfig.id)),
    });
  }
  return { ...reportOf(sources), processes: processesOf(config.dataDir) };
}

/** The live processes on `dataDir`, each with the source leases it holds. */
export function processesOf(dataDir: string): ProcessStatus[] {
  const leases = new Map<string, string[]>();
  const names = (() => {
    try {
      return readdirSync(path.join(dataDir, 'leases')).filter((name) => name.endsWith('.json'));
    } catch {
      return [];
    }
  })();
  for (const name of names) {
    const id = name.slice(0, -'.json'.length);
    const holder = leaseHolder(dataDir, id);
    if (holder !== undefined) leases.set(holder.nonce, [...(leases.get(holder.nonce) ?? []), id].sort());
  }
  return liveProcesses(dataDir)
    .sort((a, b) => (a.since < b.since ? -1 : a.since > b.since ? 1 : a.pid - b.pid))
    .map((p) => ({
      pid: p.pid,
      host: p.host,
      command: p.command,
      transport: p.transport,
      since: p.since,
      config: p.config,
      leases: leases.get(p.nonce) ?? [],
    }));
}
