import { plural } from '../shared/text.ts';
import type { CheckReport } from './checkReport.ts';

// GitHub workflow commands (`::error file=…,line=…,title=…::message`): the runner's escaping, so a message or
// path never ends the command early (@actions/core's escapeData and escapeProperty).
const escapeData = (text: string) =>
  text.replaceAll('%', '%25').replaceAll('\r', '%0D').replaceAll('\n', '%0A');
const escapeProperty = (text: string) => escapeData(text).replaceAll(':', '%3A').replaceAll(',', '%2C');

function command(
  kind: 'error' | 'warning' | 'notice',
  properties: Record<string, string | number | undefined>,
  message: string,
): string {
  const props = Object.entries(properties)
    .filter(([, value]) => value !== undefined)
    .map(([key, value]) => `${key}=${escapeProperty(String(value))}`)
    .join(',');
  return `::${kind}${props === '' ? '' : ` ${props}`}::${escapeData(message)}\n`;
}

/** `3 errors, 1 warning`, and `, 2 info` when there is information. */
export function countsOf(report: CheckReport): string {
  const counts = `${plural(report.errors, 'error')}, ${plural(report.warnings, 'warning')}`;
  return report.infos === 0 ? counts : `${counts}, ${report.infos} info`;
}

/** `skillpin check --format github`: one annotation per problem (on its file and line), then the summary. */
export const annotations = {
  report(report: CheckReport, prefix: string, problemsOnly = false): string {
    // Information is a notice: shown on the file, never failing the run.
    const lines = report.problems.map((p) =>
      command(
        p.severity === 'info' ? 'notice' : p.severity,
        { file: `${prefix}${p.path}`, line: p.line, title: p.reason },
        p.detail,
      ),
    );
    const uncommitted = report.uncommitted ?? [];
    if (uncommitted.length > 0)
      lines.push(
        command(
          'notice',
          { title: 'uncommitted skill files' },
          `checked commit ${report.commit} (HEAD); not checked: ${uncommitted.map((c) => `${c.path} (${c.change})`).join(', ')}`,
        ),
      );
    if (!problemsOnly)
      lines.push(
        `${report.repository} @ ${report.commit}: ${plural(report.skills.length, 'skill')} served, ` +
          `${countsOf(report)}\n`,
      );
    return lines.join('');
  },
  /** A check that could not run at all (usage, an unreadable repository): one error annotation. */
  failure(detail: string): string {
    return command('error', { title: 'skillpin check' }, detail);
  },
};
