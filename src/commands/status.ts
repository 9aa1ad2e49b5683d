import type { Config } from '../config/index.ts';
import { indexStore } from '../index/index.ts';
import type { SkillProblem } from '../shared/reasons.ts';
import { indexDir, indexOptionsOf, originOf } from '../sync/source.ts';
import { readState } from '../sync/state.ts';

/** `skillpin status --json` output. Version 1: fields are only ever added. */
export interface StatusReport {
  version: 1;
  sources: Array<{
    id: string;
    repository: string;
    current: { commit: string; commitTime?: string; skills?: number; problems?: SkillProblem[] } | null;
    retained: string[];
    lastSync: string | null;
    lastSuccess: string | null;
    lastError: { reason: string; detail: string; at: string } | null;
  }>;
}

/** What the last run recorded in dataDir, read without touching any repository or the network. */
export async function statusReport(config: Config): Promise<StatusReport> {
  const state = await readState(config.dataDir);
  const sources = [];
  for (const source of config.sources) {
    const saved = state.sources[source.id];
    let current: StatusReport['sources'][number]['current'] = null;
    if (saved?.current !== undefined) {
      const index = await indexStore(indexDir(config.dataDir, source.id)).load(
        saved.current,
        indexOptionsOf(source),
      );
      current =
        index === undefined
          ? { commit: saved.current }
          : {
              commit: saved.current,
              commitTime: index.commitTime,
              skills: index.skills.length,
              problems: index.problems,
            };
    }
    sources.push({
      id: source.id,
      repository: originOf(source).repository,
      current,
      retained: saved?.retained ?? [],
      lastSync: saved?.lastSync ?? null,
      lastSuccess: saved?.lastSuccess ?? null,
      lastError: saved?.lastError ?? null,
    });
  }
  return { version: 1, sources };
}

export function renderStatus(report: StatusReport): string {
  const rows = report.sources.map((s) => {
    const problems = s.current?.problems;
    const errors = problems?.filter((p) => p.severity === 'error').length;
    return [
      s.id,
      s.current === null ? '-' : s.current.commit.slice(0, 12),
      s.current?.skills === undefined ? '-' : String(s.current.skills),
      problems === undefined ? '-' : `${errors}/${problems.length - errors!}`,
      s.retained.length === 0 ? '-' : s.retained.map((c) => c.slice(0, 12)).join(','),
      s.lastSync ?? 'never',
      s.lastError === null ? '-' : `${s.lastError.reason} (${s.lastError.at})`,
    ];
  });
  const header = ['SOURCE', 'COMMIT', 'SKILLS', 'ERR/WARN', 'RETAINED', 'LAST SYNC', 'LAST ERROR'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  const out = [line(header), ...rows.map(line)];
  for (const s of report.sources) {
    for (const p of s.current?.problems ?? [])
      out.push(
        `${s.id}@${s.current!.commit.slice(0, 12)}  ${p.severity.padEnd(7)}  ${p.reason.padEnd(22)}  ${p.path}: ${p.detail}`,
      );
    if (s.lastError !== null) out.push(`${s.id}  last error: ${s.lastError.reason}: ${s.lastError.detail}`);
  }
  return `${out.join('\n')}\n`;
}
