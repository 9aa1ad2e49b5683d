import type { SkillProblem } from '../shared/reasons.ts';
import { plural } from '../shared/text.ts';
import type { CoordinationStatus, SourceReplicas } from '../shared/status.ts';
import type { CommitStatus, SearchStats, SourceStatus, StatusReport } from '../shared/status.ts';
import { Html, html } from './html.ts';

export interface StatusPageContext {
  /** Where MCP clients connect, as the browser reached this server. */
  mcpUrl: string;
  /** Milliseconds since the epoch, for "3 min ago". */
  now: number;
  /** `GET /metrics` is served. */
  metrics: boolean;
  /** `GET /?q=`: the query and the best listed skills the caller may see. */
  search?: PageSearch;
  /** The names of the skills each source lists (its current commit), as the caller may see them. */
  skillNames?: ReadonlyMap<string, readonly string[]>;
}

/** Past this many skills, a source's names are folded under a summary. */
export const UNFOLDED_SKILL_NAMES = 30;

export interface PageSearch {
  query: string;
  results: ReadonlyArray<{ uri: string; name: string; description: string; source: string }>;
  total: number;
}

/** The page allows nothing but its own inline style: no script, no image, no request to anywhere. */
export const STATUS_PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy':
    "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

const STYLE = `
body{font:15px/1.45 system-ui,sans-serif;margin:0 auto;max-width:72rem;padding:1rem 1.5rem;color:#1b1f24}
h1{margin:.2rem 0}h2{margin:1.6rem 0 .4rem;font-size:1.25rem}h3{font-size:1rem;margin:1rem 0 .3rem}
code,pre{font:13px/1.4 ui-monospace,monospace}pre{background:#f3f4f6;padding:.6rem;overflow-x:auto}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.15rem 1rem;margin:.4rem 0}dt{color:#57606a}dd{margin:0}
section.source{border-top:1px solid #d0d7de;padding-top:.2rem}.sha{color:#57606a}
.state{font-size:.8rem;padding:.1rem .45rem;border-radius:.6rem;margin-left:.5rem;vertical-align:middle}
.serving{background:#dafbe1}.failing{background:#ffebe9}.waiting{background:#fff8c5}
.error{background:#ffebe9;padding:.5rem .7rem;border-left:4px solid #cf222e}
form.search input{font:inherit;width:min(36rem,80%)}ol.results li{margin:.3rem 0}
ul.problems{padding-left:1.2rem}ul.problems li{margin:.15rem 0}.reason{font-weight:600}
`;

const short = (commit: string) => commit.slice(0, 12);

/** "3 min ago", "in 40 s": a time a person reads at a glance, next to the exact one. */
export function relative(iso: string, now: number): string {
  const seconds = Math.round((Date.parse(iso) - now) / 1000);
  const size = Math.abs(seconds);
  const amount =
    size < 90
      ? `${size} s`
      : size < 90 * 60
        ? `${Math.round(size / 60)} min`
        : size < 36 * 3600
          ? `${Math.round(size / 3600)} h`
          : `${Math.round(size / 86_400)} d`;
  return seconds > 0 ? `in ${amount}` : `${amount} ago`;
}

const when = (iso: string | null, now: number, none: string) =>
  iso === null ? none : html`<time datetime="${iso}">${iso}</time> (${relative(iso, now)})`;

/** What a commit's search index cost: its build time, terms, postings (whole KiB, rounded up: a non-empty index is
 * never 0 KiB) and the skills it indexes by their first terms only. */
const searchLine = (search: SearchStats) =>
  html` · search index ${search.stored ? 'read' : 'built'} in ${search.buildMs} ms, ${plural(search.terms, 'term')}, ${Math.ceil(search.bytes / 1024)} KiB of postings${
    search.cut === 0 ? '' : html`, ${plural(search.cut, 'skill')} indexed by their first terms only`
  }`;

const commitLine = (status: CommitStatus, now: number) =>
  html`<code class="sha" title="${status.commit}">${short(status.commit)}</code>${
    status.commitTime === undefined ? '' : html` · committed ${when(status.commitTime, now, '')}`
  }${status.skills === undefined ? '' : html` · ${plural(status.skills, 'skill')}`}${
    status.search === undefined ? '' : searchLine(status.search)
  }`;

function problemList(problems: readonly SkillProblem[]): Html {
  const groups = (['error', 'warning', 'info'] as const).map((severity) => ({
    severity,
    items: problems.filter((problem) => problem.severity === severity),
  }));
  return html`${groups.map(({ severity, items }) =>
    items.length === 0
      ? ''
      : html`<details${severity === 'error' ? ' open' : ''}><summary>${severity === 'info' ? `${items.length} info` : plural(items.length, severity)}</summary>
<ul class="problems">${items.map(
          (problem) =>
            html`<li><code>${problem.path}</code> <span class="reason">${problem.reason}</span>: ${problem.detail}</li>`,
        )}</ul></details>`,
  )}`;
}

function stateOf(source: SourceStatus): { label: string; className: string } {
  if (source.lastError !== null)
    return { label: `failing: ${source.lastError.reason}`, className: 'failing' };
  if (source.refs !== undefined && source.lastSuccess !== null)
    return { label: `listing ${source.refs.served.length} refs`, className: 'serving' };
  if (source.current === null)
    return { label: source.syncing ? 'first sync running' : 'not synced yet', className: 'waiting' };
  return { label: source.syncing ? 'serving, syncing' : 'serving', className: 'serving' };
}

/** What a source follows: a pinned commit, a ref (of a `refs:` source), or the refs matching patterns. */
function follows(source: SourceStatus): Html | string {
  if (source.refs !== undefined)
    return html`the branches and tags matching ${source.refs.patterns.map(
      (pattern, index) => html`${index === 0 ? '' : ', '}<code>${pattern}</code>`,
    )}, each a source of its own: ${
      source.refs.served.length === 0
        ? 'none served yet'
        : source.refs.served.map(
            (id, index) => html`${index === 0 ? '' : ', '}<a href="#source-${id}">${id}</a>`,
          )
    }`;
  if (source.ref === null) return 'a pinned commit';
  if (source.group !== undefined)
    return html`<code>${source.ref}</code> of <a href="#source-${source.group}">${source.group}</a>`;
  return html`<code>${source.ref}</code>`;
}

function sourceSection(source: SourceStatus, now: number, names: readonly string[]): Html {
  const state = stateOf(source);
  const problems = source.current?.problems ?? [];
  return html`<section class="source" id="source-${source.id}">
<h2>${source.id}<span class="state ${state.className}">${state.label}</span></h2>
<dl>
<dt>repository</dt><dd><code>${source.repository}</code></dd>
<dt>follows</dt><dd>${follows(source)}</dd>
<dt>current commit</dt><dd>${source.current === null ? 'none served yet' : commitLine(source.current, now)}</dd>
<dt>retained</dt><dd>${
    source.retained.length === 0
      ? 'none'
      : source.retained.map(
          (commit, index) => html`${index === 0 ? '' : html`<br>`}${commitLine(commit, now)}`,
        )
  }</dd>
<dt>last sync</dt><dd>${when(source.lastSync, now, 'never')}</dd>
<dt>last success</dt><dd>${when(source.lastSuccess, now, 'never')}</dd>
<dt>next poll</dt><dd>${when(source.nextSync, now, source.syncing ? 'after the running sync' : 'none scheduled')}</dd>
${source.replicas === undefined ? '' : replicaRows(source.replicas, now)}
</dl>
${
  source.lastError === null
    ? ''
    : html`<p class="error">Last sync failed ${when(source.lastError.at, now, '')}: <span class="reason">${source.lastError.reason}</span>: ${source.lastError.detail}${
        source.current === null ? '' : html`<br>The commit above keeps serving.`
      }</p>`
}
${
  source.refs === undefined || source.refs.problems.length === 0
    ? ''
    : html`<h3>Refs not served</h3>
${problemList(source.refs.problems)}`
}
${
  source.current === null
    ? ''
    : html`<h3>Skills</h3>
${skillList(names)}
<h3>Problems in the current commit</h3>
${problems.length === 0 ? html`<p>None.</p>` : problemList(problems)}`
}
</section>`;
}

/** With coordination: the commit each replica serves, who polls, and when they last agreed. */
function replicaRows(replicas: SourceReplicas, now: number): Html {
  const agreed = replicas.lastAgreed;
  return html`<dt>replicas</dt><dd>${
    replicas.serving.length === 0
      ? 'none reported yet'
      : replicas.serving.map(
          (replica, index) =>
            html`${index === 0 ? '' : html`<br>`}<code>${replica.host}</code> (pid ${replica.pid})${
              replica.replica === replicas.leaseHolder ? ' polls' : ''
            }: ${replica.commit === null ? 'nothing yet' : html`<code class="sha" title="${replica.commit}">${short(replica.commit)}</code>`} since ${when(replica.since, now, '')}`,
        )
  }</dd>
<dt>replicas agree</dt><dd>${replicas.agree ? 'yes' : 'no'}${
    agreed === null
      ? ''
      : html`; last on <code class="sha" title="${agreed.commit}">${short(agreed.commit)}</code> ${when(agreed.at, now, '')}`
  }</dd>`;
}

/** Whether replicas coordinate through Redis now. */
function coordinationLine(coordination: CoordinationStatus | undefined, now: number): Html | string {
  if (coordination === undefined) return '';
  return coordination.state === 'up'
    ? html`<p>Coordination: <span class="state serving">up</span> through Redis at <code>${coordination.redis}</code> since ${when(coordination.since, now, '')}.</p>`
    : html`<p class="error">Coordination: <span class="reason">down</span> since ${when(coordination.since, now, '')} (Redis at <code>${coordination.redis}</code>: ${coordination.error ?? 'no answer'}). This replica follows every source on its own until Redis answers.</p>`;
}

/** The names a source lists, folded under a summary past UNFOLDED_SKILL_NAMES. */
function skillList(names: readonly string[]): Html {
  if (names.length === 0) return html`<p>None listed.</p>`;
  const list = html`<p class="names">${names.map((name, index) => html`${index === 0 ? '' : ', '}<code>${name}</code>`)}</p>`;
  return names.length <= UNFOLDED_SKILL_NAMES
    ? list
    : html`<details><summary>${plural(names.length, 'skill')}</summary>${list}</details>`;
}

/** Failing sources first (the ones to act on), each group in configuration order. */
const failingFirst = (sources: readonly SourceStatus[]) => [
  ...sources.filter((source) => source.lastError !== null),
  ...sources.filter((source) => source.lastError === null),
];

/** The search box (a plain GET form to this page) and, for a query, its results best first. */
function searchSection(search: PageSearch | undefined): Html {
  const query = search?.query ?? '';
  return html`<section id="search">
<h2>Search</h2>
<form class="search" method="get" action="/"><input type="search" name="q" value="${query}" aria-label="Search the listed skills" placeholder="what do you want to do?"> <button type="submit">Search</button></form>
${
  search === undefined
    ? ''
    : search.total === 0
      ? html`<p>No listed skill matches <q>${query}</q>.</p>`
      : html`<p>${search.results.length} of ${plural(search.total, 'matching skill')} for <q>${query}</q>, best first:</p>
<ol class="results">${search.results.map(
          (result) =>
            html`<li><strong>${result.name}</strong> (${result.source}): ${result.description}<br><code>${result.uri}</code></li>`,
        )}</ol>`
}
</section>`;
}

/** `GET /`: the status report (the same as `GET /status`) as a page a person reads at a glance. */
export function renderStatusPage(report: StatusReport, context: StatusPageContext): string {
  const { now } = context;
  const skills = report.sources.reduce((sum, source) => sum + (source.current?.skills ?? 0), 0);
  const serving = report.sources.filter((source) => source.current !== null).length;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>skillpin status</title>
<style>${new Html(STYLE)}</style>
</head>
<body>
<header>
<h1>skillpin</h1>
<p>${plural(report.sources.length, 'source')}, ${serving} serving, ${plural(skills, 'skill')} listed${
    report.failures.length === 0
      ? ''
      : html`, <strong>${plural(report.failures.length, 'source')} failing</strong>`
  }. Read <time datetime="${new Date(now).toISOString()}">${new Date(now).toISOString()}</time>.</p>
${coordinationLine(report.coordination, now)}
</header>
<section id="connect">
<h2>Connect</h2>
<p>MCP endpoint (Streamable HTTP): <code>${context.mcpUrl}</code></p>
<pre>claude mcp add --transport http skillpin ${context.mcpUrl}</pre>
<p>Or in a host's JSON config: <code>{"type": "http", "url": "${context.mcpUrl}"}</code>. This report as JSON:
<code>/status</code>${context.metrics ? html`; Prometheus metrics: <code>/metrics</code>` : ''}.</p>
</section>
${searchSection(context.search)}
${failingFirst(report.sources).map((source) =>
  sourceSection(source, now, context.skillNames?.get(source.id) ?? []),
)}
</body>
</html>
`.text;
}
