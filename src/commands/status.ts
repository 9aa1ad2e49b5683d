import { readdirSync } from 'node:fs';
import path from 'node:path';
import type { Config, CoordinationConfig } from '../config/index.ts';
import type {
  CommitStatus,
  DamagedFileStatus,
  ProcessStatus,
  SourceStatus,
  StatusReport,
} from '../shared/status.ts';
import { type DamagedFile, readHolderFile } from '../sync/dataDir/lease.ts';
import { leaseFile } from '../sync/dataDir/membership.ts';
import { liveProcesses } from '../sync/dataDir/processes.ts';
import { EMPTY_LISTING, expandedSources, isRefsSource } from '../sync/refGroup.ts';
import { rebuilt } from '../sync/retention.ts';
import { openSource } from '../sync/source.ts';
import { openStateFile } from '../sync/dataDir/state.ts';
import { refOf, refsStatusOf, statusReportOf } from '../sync/status.ts';

export type { StatusReport } from '../shared/status.ts';

export function renderStatus(report: StatusReport): string {
  const rows = report.sources.map((s) => {
    const problems = s.current?.problems;
    const count = (severity: string) => problems?.filter((p) => p.severity === severity).length ?? 0;
    return [
      s.id,
      s.current === null ? '-' : s.current.commit.slice(0, 12),
      s.current?.skills === undefined ? '-' : String(s.current.skills),
      problems === undefined ? '-' : `${count('error')}/${count('warning')}`,
      s.retained.length === 0 ? '-' : s.retained.map((c) => c.commit.slice(0, 12)).join(','),
      s.lastSync ?? 'never',
      s.lastError === null ? '-' : `${s.lastError.reason} (${s.lastError.at})`,
    ];
  });
  const header = ['SOURCE', 'COMMIT', 'SKILLS', 'ERR/WARN', 'RETAINED', 'LAST SYNC', 'LAST ERROR'];
  const out = table(header, rows);
  for (const s of report.sources) {
    for (const p of s.current?.problems ?? [])
      out.push(
        `${s.id}@${s.current!.commit.slice(0, 12)}  ${p.severity.padEnd(7)}  ${p.reason.padEnd(22)}  ${p.path}: ${p.detail}`,
      );
    if (s.lastError !== null) out.push(`${s.id}  last error: ${s.lastError.reason}: ${s.lastError.detail}`);
    if (s.refs !== undefined) {
      const served = s.refs.served.length === 0 ? 'none' : s.refs.served.join(', ');
      out.push(`${s.id}  refs ${s.refs.patterns.join(', ')}: serving ${served}`);
      for (const p of s.refs.problems)
        out.push(`${s.id}  ${p.severity.padEnd(7)}  ${p.reason.padEnd(22)}  ${p.path}: ${p.detail}`);
    }
  }
  out.push(...renderProcesses(report.processes ?? []));
  out.push(...renderReplicas(report));
  for (const d of report.damaged ?? []) out.push(`damaged  ${d.reason.padEnd(24)}  ${d.file}: ${d.detail}`);
  return `${out.join('\n')}\n`;
}

/** Columns as wide as their widest cell, two spaces apart: the header line, then one line per row. */
function table(header: string[], rows: string[][]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)];
}

/** The processes using the dataDir and the leases each holds; a source nobody leases is synced by none now. */
function renderProcesses(processes: ProcessStatus[]): string[] {
  if (processes.length === 0) return ['', 'no skillpin process uses this dataDir now'];
  const header = ['PID', 'HOST', 'COMMAND', 'SINCE', 'LEASES', 'CONFIG'];
  const rows = processes.map((p) => [
    String(p.pid),
    p.host,
    p.transport === null ? p.command : `${p.command} ${p.transport}`,
    p.since,
    p.leases.length === 0 ? '-' : p.leases.join(','),
    p.config,
  ]);
  return ['', ...table(header, rows)];
}

/** With `coordination:`: whether Redis answers, then per shared source what each replica serves, who polls, agreement. */
function renderReplicas(report: StatusReport): string[] {
  const { coordination } = report;
  if (coordination === undefined) return [];
  if (coordination.state === 'down')
    return ['', `coordination down: Redis at ${coordination.redis}: ${coordination.error ?? 'no answer'}`];
  const shared = report.sources.flatMap((s) =>
    s.replicas === undefined ? [] : [[s.id, s.replicas] as const],
  );
  const header = ['SOURCE', 'REPLICA', 'PID', 'COMMIT', 'SINCE', 'POLLS'];
  const rows = shared.flatMap(([id, replicas]) =>
    replicas.serving.map((r) => [
      id,
      r.replica,
      String(r.pid),
      r.commit === null ? '-' : r.commit.slice(0, 12),
      r.since,
      r.replica === replicas.leaseHolder ? 'yes' : '-',
    ]),
  );
  const agreement = shared.map(([id, replicas]) => {
    const last = replicas.lastAgreed;
    const agreed = last === null ? 'never' : `${last.commit.slice(0, 12)} at ${last.at}`;
    return `${id}  replicas agree: ${replicas.agree ? 'yes' : 'no'}; polled by ${replicas.leaseHolder ?? 'none'}; last agreed: ${agreed}`;
  });
  return ['', `coordination up: Redis at ${coordination.redis}`, ...table(header, rows), ...agreement];
}

/**
 * `skillpin status`: what dataDir records for every source, and the processes using it; with `coordination:`,
 * what the replicas report through Redis (read only; no other network).
 */
export async function status(config: Config, options: { json: boolean }, out: (text: string) => void) {
  const report = await statusReport(config);
  out(options.json ? `${JSON.stringify(report, null, 2)}\n` : renderStatus(report));
}

/**
 * What the last run recorded in dataDir, read without opening a repository or touching the network. A source
 * state.json does not name (it is missing or corrupt) is shown as a restart would rebuild it.
 */
export async function statusReport(config: Config): Promise<StatusReport> {
  const read = await openStateFile(config.dataDir).read();
  const { state } = read;
  const damaged: DamagedFileStatus[] = [];
  const report = (d: DamagedFile) =>
    damaged.push({ file: path.relative(config.dataDir, d.file), reason: d.reason, detail: d.detail });
  if (read.found === 'corrupt')
    report({ file: path.join(config.dataDir, 'state.json'), reason: read.reason, detail: read.detail });
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
  const processes = processesOf(config.dataDir, report);
  const local = { ...statusReportOf(sources), processes, ...(damaged.length === 0 ? {} : { damaged }) };
  return config.coordination === undefined ? local : withReplicas(local, config, config.coordination);
}

/** `report` with what the replicas serve of each shared source, read from Redis (the client loaded only then). */
async function withReplicas(
  report: StatusReport,
  config: Config,
  coordination: CoordinationConfig,
): Promise<StatusReport> {
  const { readReplicas } = await import('../sync/coordination/inspect.ts');
  const { replicas, coordination: state } = await readReplicas(coordination, config.sources, new Date());
  const sources = report.sources.map((source) => {
    const seen = replicas.get(source.id);
    return seen === undefined ? source : { ...source, replicas: seen };
  });
  return { ...report, sources, coordination: state };
}

/** The live processes on `dataDir`, each with the source leases it holds; damaged files are told to `damaged`. */
export function processesOf(dataDir: string, damaged?: (file: DamagedFile) => void): ProcessStatus[] {
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
    const read = readHolderFile(leaseFile(dataDir, id));
    if (read !== undefined && 'damaged' in read) damaged?.(read.damaged);
    const holder = read !== undefined && 'holder' in read ? read.holder : undefined;
    if (holder !== undefined) leases.set(holder.nonce, [...(leases.get(holder.nonce) ?? []), id].sort());
  }
  return liveProcesses(dataDir, damaged)
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
