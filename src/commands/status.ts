import type { Config } from '../config/index.ts';
import { type ProcessStatus, statusReport, type StatusReport } from '../sync/status.ts';

export { statusReport, type StatusReport } from '../sync/status.ts';

export function renderStatus(report: StatusReport): string {
  const rows = report.sources.map((s) => {
    const problems = s.current?.problems;
    const errors = problems?.filter((p) => p.severity === 'error').length ?? 0;
    return [
      s.id,
      s.current === null ? '-' : s.current.commit.slice(0, 12),
      s.current?.skills === undefined ? '-' : String(s.current.skills),
      problems === undefined ? '-' : `${errors}/${problems.length - errors}`,
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

/** `skillpin status`: what dataDir records for every source, and the processes using it (no network: it only reads). */
export async function status(config: Config, options: { json: boolean }, out: (text: string) => void) {
  const report = await statusReport(config);
  out(options.json ? `${JSON.stringify(report, null, 2)}\n` : renderStatus(report));
}
