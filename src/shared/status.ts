import type { ReasonOf, SkillProblem, SourceReason } from './reasons.ts';

/**
 * The status report's shape: `GET /status` and the status page (http/), `skillpin status` (commands/), built
 * live by sync/ or read from dataDir by commands/status.ts. A leaf, so that those who show it need not reach into
 * the layer that builds it.
 */

/** A source whose latest sync failed, as the report names it (catalog's SourceFailure). */
export interface StatusFailure {
  id: string;
  reason: SourceReason;
  detail: string;
  /** A ref of a `refs:` source: that source's id. */
  group?: string;
}

/** One replica and the commit of a source it reported serving. */
export interface ReplicaServing {
  replica: string;
  host: string;
  pid: number;
  /** `null`: it serves nothing of the source yet. */
  commit: string | null;
  /** When it started serving that commit, ISO 8601. */
  since: string;
}

/** What the replicas serve of one source (`/status`). */
export interface SourceReplicas {
  /** The replica holding the poll lease, if any. */
  leaseHolder: string | null;
  /** Every live replica, this one included, by replica id. */
  serving: ReplicaServing[];
  /** Whether every live replica serves the same commit now. */
  agree: boolean;
  /** The last time the replicas were seen serving one commit: that commit and when, ISO 8601. */
  lastAgreed: { commit: string; at: string } | null;
}

/** How coordination runs (`/status`, `/metrics`). */
export interface CoordinationStatus {
  /** `up`: Redis answers; `down`: unreachable, every replica follows on its own until it answers again. */
  state: 'up' | 'down';
  /** Redis as `host:port` (never its password). */
  redis: string;
  /** This replica's id in reports and leases; `null` from `skillpin status`, which only reads (it is no replica). */
  replica: string | null;
  /** When the state last changed, ISO 8601 (`skillpin status`: when it read Redis). */
  since: string;
  /** Why it is down (the client's error, redacted; `authentication failed: …` for a refused password); `null` when up. */
  error: string | null;
  /** Publications read from Redis and refused since this replica started, by source and reason (none, and always
   * from `skillpin status`: empty). */
  refused: Array<{ source: string; reason: string; count: number }>;
}

/** One commit as reported: what its index says (only `commit` when its index file is gone). */
export interface CommitStatus {
  commit: string;
  commitTime?: string;
  skills?: number;
  problems?: SkillProblem[];
  /** Its search index, once built (live status only). */
  search?: SearchStats;
}

/** What a search index cost (index/searchBuild.ts builds it, saved with the commit's index), for status and metrics. */
export interface SearchStats {
  /** Milliseconds to read it from its file (`stored`), or to read the SKILL.md files and build it. */
  buildMs: number;
  /** It was read from the search file saved with the commit's index: nothing was tokenised. */
  stored: boolean;
  skills: number;
  /** Distinct terms indexed. */
  terms: number;
  /** Bytes its postings take (typed arrays; the term table aside). */
  bytes: number;
  /** Skills whose SKILL.md could not be read: indexed by name and description only. */
  unread: number;
  /** Skills indexed by their first terms only (MAX_SKILL_TERMS distinct ones, or the index held MAX_INDEX_TERMS). */
  cut: number;
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
  /** With `coordination:`: the commit each replica serves, who polls, and when they last agreed (live status, and
   * `skillpin status` reading Redis). */
  replicas?: SourceReplicas;
}

/** A file of the dataDir that skillpin does not use, and why (a `datadir-` reason). */
export interface DamagedFileStatus {
  /** Its path inside the dataDir. */
  file: string;
  reason: ReasonOf<'datadir'>;
  detail: string;
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
  failures: StatusFailure[];
  /** Every live process using the dataDir, oldest first (`skillpin status` only). */
  processes?: ProcessStatus[];
  /** Files of the dataDir that are damaged and not used: too large, not regular files, not what skillpin writes
   * (`skillpin status` only; absent when there are none). */
  damaged?: DamagedFileStatus[];
  /** With `coordination:`: whether Redis answers (live status, and `skillpin status` reading Redis). */
  coordination?: CoordinationStatus;
}

/** What one sync of one source did. */
export type SyncOutcome =
  /** `repaired`: damaged commits (objects fetched again, or an index rebuilt) this sync repaired. */
  | { id: string; ok: true; commit: string; changed: boolean; repaired?: string[] }
  /** `cause`: what git or the remote said, one line, for the operator's stderr only (never a client). */
  | { id: string; ok: false; reason: SourceReason; detail: string; serving?: string; cause?: string };
