import { createRequire } from 'node:module';
import type { Registry } from 'prom-client';
import type { Catalog, Namespace } from '../catalog/index.ts';
import type { RequestOutcome } from '../mcp/observe.ts';
import type { SearchStats } from '../mcp/search.ts';
import type { SyncOutcome } from '../shared/status.ts';
import type { StatusReport } from '../shared/status.ts';
import type { WebhookOutcome } from './webhooks.ts';

export const METRICS_PATH = '/metrics';

// prom-client (CommonJS) loads when a server turns metrics on, not with every process that imports this file.
const load = createRequire(import.meta.url);
const promClient = () => load('prom-client') as typeof import('prom-client');

/** Methods that get their own label value; any other method a client sends counts as `other`. */
const METHODS = new Set([
  'initialize',
  'ping',
  'server/discover',
  'skills/list',
  'skills/get',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'resources/directory/read',
  'resources/subscribe',
  'resources/unsubscribe',
  'prompts/list',
  'prompts/get',
  'tools/list',
  'tools/call',
  'completion/complete',
  'logging/setLevel',
]);

/** What the metrics are fed from while serving, and read from when scraped. */
export interface Metrics {
  readonly contentType: string;
  /** The Prometheus text exposition of every metric, read now. */
  render(): Promise<string>;
  requested(method: string, outcome: RequestOutcome, seconds: number): void;
  /** File bytes read for a client (resources/read, tools, prompts). */
  served(source: string, bytes: number): void;
  synced(outcome: SyncOutcome, seconds: number): void;
  delivered(outcome: WebhookOutcome): void;
  /** Where the number of open 2025-11-25 sessions is read when scraped. */
  countSessions(read: () => number): void;
}

export interface MetricsOptions {
  catalog: Catalog;
  /** What building each namespace's search index cost, once built (serving.ts). */
  searchStats?: (ns: Namespace) => SearchStats | undefined;
  /** The live status: last successful sync and failures. */
  status: () => StatusReport;
  now?: () => number;
  /** prom-client's process and Node.js metrics (CPU, memory, event loop, GC). */
  process?: boolean;
}

/** What the gauges read when scraped: the server's state now. */
interface Readings {
  catalog: Catalog;
  searchStats: (ns: Namespace) => SearchStats | undefined;
  status: () => StatusReport;
  now: () => number;
  sessions: () => number;
}

type Sample = readonly [labels: Record<string, string>, value: number];

/** A gauge (or a counter kept elsewhere) read when scraped: its samples are computed from what the server holds then. */
interface ScrapedGauge {
  /** A counter: a total the server keeps, exposed as one (`_total`). */
  counter?: true;
  name: string;
  help: string;
  labelNames: readonly string[];
  /** The gauge's samples now; samples with the same labels add up. */
  samples(from: Readings): Iterable<Sample>;
}

/** The search index of each source's current commit, once it is built. */
const searchGauge = (name: string, help: string, value: (stats: SearchStats) => number): ScrapedGauge => ({
  name,
  help,
  labelNames: ['source'],
  samples: ({ catalog, searchStats }) =>
    catalog.state.sources.flatMap((source): Sample[] => {
      const stats = searchStats(source.current);
      return stats === undefined ? [] : [[{ source: source.id }, value(stats)]];
    }),
});

// A declarative table, one entry per gauge: its name, help, labels and where its samples come from.
const GAUGES: readonly ScrapedGauge[] = [
  {
    name: 'skillpin_sessions_open',
    help: 'Open 2025-11-25 sessions over Streamable HTTP',
    labelNames: [],
    samples: ({ sessions }) => [[{}, sessions()]],
  },
  {
    name: 'skillpin_source_last_success_age_seconds',
    help: "Seconds since each source's last successful sync (absent until it has one)",
    labelNames: ['source'],
    samples: ({ status, now }) =>
      status().sources.flatMap((source): Sample[] =>
        source.lastSuccess === null
          ? []
          : [[{ source: source.id }, (now() - Date.parse(source.lastSuccess)) / 1000]],
      ),
  },
  {
    name: 'skillpin_source_failing',
    help: 'Sources whose latest sync failed (what they served before keeps serving), by reason code',
    labelNames: ['source', 'reason'],
    samples: ({ catalog }) =>
      catalog.state.failures.map((failure): Sample => [{ source: failure.id, reason: failure.reason }, 1]),
  },
  {
    name: 'skillpin_source_commits',
    help: 'Commits each source serves: current (listed, 0 or 1) and retained (still served, not listed)',
    labelNames: ['source', 'state'],
    samples: ({ catalog }) =>
      catalog.state.sources.flatMap((source): Sample[] => [
        [{ source: source.id, state: 'current' }, 1],
        [{ source: source.id, state: 'retained' }, source.retained.length],
      ]),
  },
  {
    name: 'skillpin_source_skills',
    help: "Skills served in each source's current commit",
    labelNames: ['source'],
    samples: ({ catalog }) =>
      catalog.state.sources.map((source): Sample => [{ source: source.id }, source.current.skills.length]),
  },
  {
    name: 'skillpin_source_problems',
    help: "Problems reported in each source's current commit, by reason code and severity",
    labelNames: ['source', 'reason', 'severity'],
    samples: ({ catalog }) =>
      catalog.state.sources.flatMap((source) =>
        source.current.problems.map(
          (problem): Sample => [{ source: source.id, reason: problem.reason, severity: problem.severity }, 1],
        ),
      ),
  },
  searchGauge(
    'skillpin_search_index_build_seconds',
    "How long building the search index of each source's current commit took (absent until it is built)",
    (stats) => stats.buildMs / 1000,
  ),
  searchGauge(
    'skillpin_search_index_terms',
    "Distinct terms in the search index of each source's current commit (absent until it is built)",
    (stats) => stats.terms,
  ),
  searchGauge(
    'skillpin_search_index_bytes',
    "Bytes the postings of the search index of each source's current commit take (typed arrays; absent until it is built)",
    (stats) => stats.bytes,
  ),
  // With coordination: whether Redis answers, and the sources whose poll this replica holds.
  {
    name: 'skillpin_coordination_up',
    help: 'With coordination: 1 while Redis answers, 0 while this replica follows every source on its own',
    labelNames: [],
    samples: ({ status }) => {
      const { coordination } = status();
      return coordination === undefined ? [] : [[{}, coordination.state === 'up' ? 1 : 0]];
    },
  },
  {
    name: 'skillpin_coordination_lease_held',
    help: 'With coordination: 1 for each source whose poll lease this replica holds (it lists the refs for all)',
    labelNames: ['source'],
    samples: ({ status }) => {
      const { coordination, sources } = status();
      if (coordination === undefined) return [];
      return sources.flatMap((source): Sample[] =>
        source.replicas === undefined
          ? []
          : [[{ source: source.id }, source.replicas.leaseHolder === coordination.replica ? 1 : 0]],
      );
    },
  },
  {
    counter: true,
    name: 'skillpin_coordination_publications_refused_total',
    help: 'With coordination: publications read from Redis that this replica refused (it listed the refs itself), by source and reason code (publication-unsigned, -forged, -stale, -replayed, -backward, -tag-moved)',
    labelNames: ['source', 'reason'],
    samples: ({ status }) =>
      (status().coordination?.refused ?? []).map(
        ({ source, reason, count }): Sample => [{ source, reason }, count],
      ),
  },
];

type PromClient = ReturnType<typeof promClient>;

/** The metrics fed while serving: requests, bytes, syncs and their failures, webhook deliveries. */
function fedMetrics({ Counter, Histogram }: PromClient, registers: Registry[]) {
  return {
    requests: new Histogram({
      name: 'skillpin_mcp_request_duration_seconds',
      help: 'MCP requests answered, by JSON-RPC method and outcome (ok or the error), and how long each took',
      labelNames: ['method', 'outcome'] as const,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
    bytes: new Counter({
      name: 'skillpin_served_bytes_total',
      help: 'Bytes of skill files read for clients (resources/read, tools, prompts), by source',
      labelNames: ['source'] as const,
      registers,
    }),
    syncs: new Histogram({
      name: 'skillpin_sync_duration_seconds',
      help: 'Syncs by source and result (updated, unchanged, failed), and how long each ran',
      labelNames: ['source', 'result'] as const,
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
      registers,
    }),
    failures: new Counter({
      name: 'skillpin_sync_failures_total',
      help: 'Failed syncs by source and reason code',
      labelNames: ['source', 'reason'] as const,
      registers,
    }),
    webhooks: new Counter({
      name: 'skillpin_webhook_deliveries_total',
      help: 'Webhook deliveries by outcome, a reason code (webhook-triggered, -ignored, -ping, -replayed, -unauthorized, -invalid, -too-large)',
      labelNames: ['outcome'] as const,
      registers,
    }),
  };
}

/** A gauge of the table, registered: reset on each scrape, then given its samples. */
function registerGauge(
  { Counter, Gauge }: PromClient,
  registers: Registry[],
  gauge: ScrapedGauge,
  from: Readings,
) {
  new (gauge.counter ? Counter : Gauge)({
    name: gauge.name,
    help: gauge.help,
    labelNames: gauge.labelNames,
    registers,
    collect() {
      this.reset();
      for (const [labels, value] of gauge.samples(from)) this.inc(labels, value);
    },
  });
}

/**
 * The metrics of one server, in a registry of its own. Labels are bounded: source ids, reason codes, method
 * names from a fixed list and outcomes from fixed sets; never URIs, skill names or anything a client chose.
 */
export function createMetrics(options: MetricsOptions): Metrics {
  const client = promClient();
  const register = new client.Registry();
  const registers = [register];
  if (options.process !== false) client.collectDefaultMetrics({ register });
  const { requests, bytes, syncs, failures, webhooks } = fedMetrics(client, registers);
  const readings: Readings = {
    catalog: options.catalog,
    searchStats: options.searchStats ?? (() => undefined),
    status: options.status,
    now: options.now ?? Date.now,
    sessions: () => 0,
  };
  for (const gauge of GAUGES) registerGauge(client, registers, gauge, readings);

  return {
    contentType: register.contentType,
    render: () => register.metrics(),
    requested(method, outcome, seconds) {
      requests.observe({ method: METHODS.has(method) ? method : 'other', outcome }, seconds);
    },
    served(source, count) {
      bytes.inc({ source }, count);
    },
    synced(outcome, seconds) {
      const result = outcome.ok ? (outcome.changed ? 'updated' : 'unchanged') : 'failed';
      syncs.observe({ source: outcome.id, result }, seconds);
      if (!outcome.ok) failures.inc({ source: outcome.id, reason: outcome.reason });
    },
    delivered(outcome) {
      webhooks.inc({ outcome });
    },
    countSessions(read) {
      readings.sessions = read;
    },
  };
}
