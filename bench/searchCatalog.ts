/**
 * The search bench's data: a catalog modelled on real skill repositories (families of skills that differ by
 * language, database, cloud, file format, framework or service, as public catalogs have them, plus one-off
 * skills), generated deterministically from the templates below, and the queries a person would type, each with
 * the skills that answer it. The queries were written before any ranker was run on this catalog and have not
 * been changed since: they paraphrase (a person describes the task or the symptom, not the skill's title).
 */

export interface CatalogSkill {
  name: string;
  description: string;
  /** SKILL.md without its frontmatter. */
  body: string;
}

export interface SearchQuery {
  catalog: 'realistic' | 'synthetic';
  query: string;
  /** Skill names that answer it (any of them counts as a hit). */
  expect: string[];
}

type Variant = readonly [slug: string, display: string];

const LANGS: Variant[] = [
  ['python', 'Python'],
  ['typescript', 'TypeScript'],
  ['go', 'Go'],
  ['rust', 'Rust'],
  ['java', 'Java'],
  ['ruby', 'Ruby'],
  ['kotlin', 'Kotlin'],
  ['swift', 'Swift'],
  ['csharp', 'C#'],
  ['php', 'PHP'],
  ['elixir', 'Elixir'],
  ['scala', 'Scala'],
];
const DBS: Variant[] = [
  ['postgres', 'PostgreSQL'],
  ['mysql', 'MySQL'],
  ['sqlite', 'SQLite'],
  ['mongodb', 'MongoDB'],
  ['redis', 'Redis'],
  ['dynamodb', 'DynamoDB'],
  ['cassandra', 'Cassandra'],
  ['clickhouse', 'ClickHouse'],
  ['snowflake', 'Snowflake'],
  ['bigquery', 'BigQuery'],
];
const CLOUDS: Variant[] = [
  ['aws', 'AWS'],
  ['gcp', 'Google Cloud'],
  ['azure', 'Azure'],
  ['cloudflare', 'Cloudflare'],
  ['fly', 'Fly.io'],
  ['heroku', 'Heroku'],
  ['vercel', 'Vercel'],
  ['netlify', 'Netlify'],
  ['digitalocean', 'DigitalOcean'],
  ['kubernetes', 'Kubernetes'],
];
const DOCS: Variant[] = [
  ['pdf', 'PDF'],
  ['docx', 'Word (.docx)'],
  ['xlsx', 'Excel (.xlsx)'],
  ['pptx', 'PowerPoint (.pptx)'],
  ['csv', 'CSV'],
  ['markdown', 'Markdown'],
  ['html', 'HTML'],
  ['epub', 'EPUB'],
  ['odt', 'OpenDocument (.odt)'],
  ['latex', 'LaTeX'],
];
const FRONT: Variant[] = [
  ['react', 'React'],
  ['vue', 'Vue'],
  ['svelte', 'Svelte'],
  ['angular', 'Angular'],
  ['solid', 'SolidJS'],
  ['nextjs', 'Next.js'],
  ['nuxt', 'Nuxt'],
  ['remix', 'Remix'],
  ['astro', 'Astro'],
  ['lit', 'Lit'],
];
const SERVICES: Variant[] = [
  ['github', 'GitHub'],
  ['gitlab', 'GitLab'],
  ['jira', 'Jira'],
  ['linear', 'Linear'],
  ['slack', 'Slack'],
  ['notion', 'Notion'],
  ['confluence', 'Confluence'],
  ['stripe', 'Stripe'],
  ['salesforce', 'Salesforce'],
  ['zendesk', 'Zendesk'],
  ['hubspot', 'HubSpot'],
  ['sentry', 'Sentry'],
];

/** A family: one skill per variant, `{V}` replaced by the variant's display name. */
interface Family {
  variants: Variant[];
  stem: string;
  description: string;
  /** Sections: heading, then paragraphs. */
  sections: Array<[string, string]>;
}

const FAMILIES: Family[] = [
  {
    variants: LANGS,
    stem: 'unit-testing',
    description: 'Write {V} unit tests with the standard test runner, fixtures and mocks.',
    sections: [
      ['When to use', 'A new function or module in {V} has no tests, or coverage is low before a refactor.'],
      [
        'Steps',
        'Pick the behaviour to pin down, write one assertion per case, isolate side effects behind fakes, run the suite and read the coverage report.',
      ],
      ['Pitfalls', 'Do not assert on private details; name each test by the behaviour it checks.'],
    ],
  },
  {
    variants: LANGS,
    stem: 'flaky-test-triage',
    description: 'Find why {V} tests fail intermittently and make them deterministic.',
    sections: [
      [
        'Symptoms',
        'A test passes on a laptop but sometimes fails on the CI server; reruns turn it green; failures depend on order, timing or the clock.',
      ],
      [
        'Steps',
        'Rerun the test in a loop, randomise the order, look for shared state, sleeps, real network calls and time zones; replace them with injected clocks and fakes.',
      ],
    ],
  },
  {
    variants: LANGS,
    stem: 'dependency-upgrade',
    description: 'Upgrade {V} dependencies safely, one major version at a time.',
    sections: [
      [
        'When to use',
        'Packages are outdated, a security advisory names a library, or a lockfile has drifted from the manifest.',
      ],
      [
        'Steps',
        'List outdated packages, read each changelog for breaking changes, bump one at a time, run the tests, commit the lockfile.',
      ],
    ],
  },
  {
    variants: LANGS,
    stem: 'performance-profiling',
    description: 'Profile {V} programs to find CPU hot spots and slow code paths.',
    sections: [
      ['When to use', 'A {V} service or script is slow, uses too much CPU, or got slower after a change.'],
      [
        'Steps',
        'Reproduce with a benchmark, record a sampling profile, read the flame graph from the widest frames down, change one thing and measure again.',
      ],
    ],
  },
  {
    variants: LANGS,
    stem: 'code-review',
    description: 'Review {V} pull requests for correctness, readability and idiomatic style.',
    sections: [
      [
        'Checklist',
        'Does the change do what its description says; are errors handled; are names clear; is there a test for each new behaviour; is anything left unused.',
      ],
      ['Tone', 'Comment on the code, not the author; separate blocking issues from suggestions.'],
    ],
  },
  {
    variants: LANGS,
    stem: 'error-handling',
    description: 'Design {V} error handling: typed errors, wrapping, and messages users can act on.',
    sections: [
      [
        'Principles',
        'Fail at the point of failure with the context needed to act; never swallow an exception silently; log once, at the boundary.',
      ],
      [
        'Steps',
        'Find bare catch blocks and ignored return values; replace them with typed errors that carry a cause.',
      ],
    ],
  },
  {
    variants: LANGS,
    stem: 'package-release',
    description: 'Publish a {V} library: versioning, changelog and registry upload.',
    sections: [
      [
        'Steps',
        'Bump the semantic version, write the changelog entry, tag the commit, build the artifacts and upload them to the package registry from CI.',
      ],
      ['Checks', 'The package installs in a clean environment; the README example runs.'],
    ],
  },
  {
    variants: LANGS,
    stem: 'linting-setup',
    description: 'Set up a {V} linter and formatter with editor and CI integration.',
    sections: [
      [
        'Steps',
        'Choose the community linter and formatter, commit their config, add a pre-commit hook and a CI job that fails on warnings.',
      ],
      ['Adoption', 'Format the whole codebase in one commit so blame stays readable.'],
    ],
  },
  {
    variants: LANGS,
    stem: 'memory-leak-hunt',
    description: 'Track down {V} memory leaks with heap snapshots and allocation profiles.',
    sections: [
      [
        'Symptoms',
        'The process grows until it is killed for running out of memory; RAM usage climbs steadily over hours; garbage collection pauses get longer.',
      ],
      [
        'Steps',
        'Take two heap snapshots some minutes apart, diff them, follow the retainers of the growing objects: caches without bounds, listeners never removed, global maps.',
      ],
    ],
  },
  {
    variants: LANGS,
    stem: 'concurrency-debugging',
    description: 'Debug {V} race conditions, deadlocks and thread-safety bugs.',
    sections: [
      [
        'Symptoms',
        'The program hangs forever under load, two requests corrupt each other’s data, or results differ between runs.',
      ],
      [
        'Steps',
        'Dump the threads or tasks while it hangs, find the locks each holds and waits on, run the race detector, shrink the shared mutable state.',
      ],
    ],
  },
  {
    variants: LANGS,
    stem: 'api-client',
    description: 'Generate a typed {V} client from an OpenAPI specification.',
    sections: [
      [
        'When to use',
        'A service publishes an OpenAPI or Swagger document and {V} code calls its HTTP endpoints by hand.',
      ],
      [
        'Steps',
        'Run the generator, wrap authentication and retries around it, pin the spec version in the repository.',
      ],
    ],
  },
  {
    variants: DBS,
    stem: 'query-tuning',
    description: 'Tune slow {V} queries with execution plans and indexes.',
    sections: [
      [
        'Symptoms',
        'A page or report takes seconds to load because one lookup scans a whole table; the database CPU is high.',
      ],
      [
        'Steps',
        'Capture the slowest statements, read the plan (EXPLAIN), add or reorder an index on the filtered columns, rewrite the query to avoid per-row subqueries, measure again.',
      ],
    ],
  },
  {
    variants: DBS,
    stem: 'schema-migration',
    description: 'Plan and run {V} schema migrations without downtime.',
    sections: [
      [
        'Steps',
        'Add columns and tables first, backfill in batches, deploy code that reads both shapes, then drop the old column in a later release.',
      ],
      ['Pitfalls', 'Long locks on big tables; renaming a column that running code still reads.'],
    ],
  },
  {
    variants: DBS,
    stem: 'backup-restore',
    description: 'Back up {V} data and rehearse restores.',
    sections: [
      [
        'Steps',
        'Schedule snapshots or dumps, copy them off site, and restore one into a scratch instance every month to prove it works.',
      ],
      ['Recovery', 'Point-in-time recovery after someone deleted rows by mistake.'],
    ],
  },
  {
    variants: DBS,
    stem: 'replication-setup',
    description: 'Configure {V} replication and read replicas.',
    sections: [
      [
        'Steps',
        'Enable the replication log, create a replica, watch the lag, route read-only traffic to it and plan failover to a standby.',
      ],
    ],
  },
  {
    variants: DBS,
    stem: 'data-modeling',
    description: 'Design {V} data models: tables or collections, keys and relationships.',
    sections: [
      [
        'Steps',
        'List the entities and how the application reads them, choose keys, normalise where writes dominate, denormalise for the hot reads.',
      ],
    ],
  },
  {
    variants: DBS,
    stem: 'etl-pipeline',
    description: 'Build ETL jobs that load data into {V} on a schedule.',
    sections: [
      [
        'Steps',
        'Extract from the source system, transform into the target shape, load incrementally with an idempotent upsert, and alert when a nightly run fails.',
      ],
    ],
  },
  {
    variants: CLOUDS,
    stem: 'cost-audit',
    description: 'Audit {V} spending and find resources to shrink or delete.',
    sections: [
      ['Symptoms', 'The monthly bill keeps growing; nobody knows which team owns which machines or buckets.'],
      [
        'Steps',
        'Break the bill down by service and tag, find idle instances, unattached volumes and oversized machines, and set budgets with alerts.',
      ],
    ],
  },
  {
    variants: CLOUDS,
    stem: 'deploy-pipeline',
    description: 'Set up continuous deployment to {V} from CI.',
    sections: [
      [
        'Steps',
        'Build the artifact once, push it to staging automatically on merge, promote the same artifact to production after checks, and keep a one-command rollback.',
      ],
    ],
  },
  {
    variants: CLOUDS,
    stem: 'secrets-rotation',
    description: 'Rotate {V} credentials and API keys on a schedule.',
    sections: [
      [
        'When to use',
        'A key leaked in a log or a repository, an employee left, or policy requires changing passwords every 90 days.',
      ],
      ['Steps', 'Create the new credential, roll it out to every consumer, verify, then revoke the old one.'],
    ],
  },
  {
    variants: CLOUDS,
    stem: 'incident-runbook',
    description: 'Respond to production incidents on {V}: triage, mitigation and postmortem.',
    sections: [
      [
        'When to use',
        'The site is down, error rates spike, or a pager alert fires in the middle of the night.',
      ],
      [
        'Steps',
        'Declare an incident, name a commander, check recent deploys and the status page, mitigate first (roll back, fail over), write the blameless postmortem afterwards.',
      ],
    ],
  },
  {
    variants: CLOUDS,
    stem: 'iam-review',
    description: 'Review {V} IAM roles and permissions for least privilege.',
    sections: [
      [
        'Steps',
        'List who and what can access each resource, find wildcard policies and unused roles, remove standing admin rights, and require approval to grant them.',
      ],
    ],
  },
  {
    variants: CLOUDS,
    stem: 'autoscaling',
    description: 'Configure autoscaling on {V} for variable traffic.',
    sections: [
      [
        'Steps',
        'Pick the signal (CPU, queue depth, requests per second), set minimum and maximum capacity, test with a load spike, and make scale-in gentle.',
      ],
    ],
  },
  {
    variants: DOCS,
    stem: 'form-filling',
    description: 'Fill in {V} forms programmatically from structured data.',
    sections: [
      [
        'When to use',
        'An application, tax return, permit request or other official paperwork comes as a {V} file with fields to complete.',
      ],
      [
        'Steps',
        'List the fillable fields and their types, map each value to its field, tick checkboxes and radio buttons, flatten the result so it cannot be edited.',
      ],
    ],
  },
  {
    variants: DOCS,
    stem: 'text-extraction',
    description: 'Extract text and metadata from {V} files.',
    sections: [
      [
        'Steps',
        'Read the file, keep the reading order and paragraphs, pull out the title, author and dates, and fall back to OCR for scanned pages.',
      ],
    ],
  },
  {
    variants: DOCS,
    stem: 'conversion',
    description: 'Convert {V} files to and from other document formats.',
    sections: [
      [
        'Steps',
        'Pick the converter, keep headings, lists and images, check the output visually, and batch a whole folder at once.',
      ],
    ],
  },
  {
    variants: DOCS,
    stem: 'redaction',
    description: 'Redact sensitive content from {V} documents.',
    sections: [
      [
        'When to use',
        'A document must be shared but contains personal data: names, addresses, social security numbers, account numbers.',
      ],
      [
        'Steps',
        'Find the sensitive spans, remove the underlying text (a black box drawn over it is not enough), strip hidden metadata and revision history.',
      ],
    ],
  },
  {
    variants: DOCS,
    stem: 'merge-split',
    description: 'Merge several {V} files into one or split one into parts.',
    sections: [
      [
        'Steps',
        'Combine files in order, keep bookmarks and page numbers, or cut a long file into chapters or page ranges.',
      ],
    ],
  },
  {
    variants: DOCS,
    stem: 'accessibility-check',
    description: 'Check {V} documents against accessibility standards.',
    sections: [
      [
        'Steps',
        'Verify tags and reading order, alternative text on images, heading structure, contrast, and that a screen reader can follow it.',
      ],
    ],
  },
  {
    variants: DOCS,
    stem: 'template-generation',
    description: 'Generate {V} documents from templates and data.',
    sections: [
      [
        'When to use',
        'Invoices, contracts, certificates or letters must be produced many times with different names and amounts.',
      ],
      [
        'Steps',
        'Write the template with placeholders, merge each data row into it, and save one document per row.',
      ],
    ],
  },
  {
    variants: DOCS,
    stem: 'table-extraction',
    description: 'Extract tables from {V} files into structured rows.',
    sections: [
      [
        'Steps',
        'Detect table regions, recover rows and columns including merged cells, and write them out as a spreadsheet or data frame.',
      ],
    ],
  },
  {
    variants: FRONT,
    stem: 'accessibility-audit',
    description: 'Audit {V} apps for accessibility (WCAG) issues.',
    sections: [
      [
        'Steps',
        'Navigate with the keyboard only, run an automated checker, test with a screen reader, fix labels, focus order, colour contrast and ARIA roles.',
      ],
    ],
  },
  {
    variants: FRONT,
    stem: 'component-testing',
    description: 'Test {V} components with a testing library and a browser runner.',
    sections: [
      [
        'Steps',
        'Render the component, interact the way a user would (click, type), assert on what is visible, and mock network requests.',
      ],
    ],
  },
  {
    variants: FRONT,
    stem: 'state-management',
    description: 'Structure {V} application state: stores, context and server data.',
    sections: [
      [
        'Symptoms',
        'Props are passed down through many layers, the same data is fetched in several places, and the UI shows stale values.',
      ],
      ['Steps', 'Separate server cache from UI state, keep one source of truth, derive instead of copying.'],
    ],
  },
  {
    variants: FRONT,
    stem: 'bundle-size',
    description: 'Shrink {V} JavaScript bundles for faster page loads.',
    sections: [
      ['Symptoms', 'The first page load is slow on phones; the downloaded JavaScript is several megabytes.'],
      [
        'Steps',
        'Analyse the bundle, split code by route, lazy-load heavy widgets, drop unused dependencies and polyfills.',
      ],
    ],
  },
  {
    variants: FRONT,
    stem: 'hydration-debugging',
    description: 'Fix {V} server-side rendering hydration mismatches.',
    sections: [
      [
        'Symptoms',
        'The console warns that the server HTML differs from the client, content flickers after load, or event handlers do not attach.',
      ],
      [
        'Steps',
        'Find values that differ between server and browser (dates, random ids, window checks) and render them after mount.',
      ],
    ],
  },
  {
    variants: FRONT,
    stem: 'form-validation',
    description: 'Validate {V} forms on the client and the server.',
    sections: [
      [
        'Steps',
        'Define one schema for the input, show errors next to each field as the user types, and validate again on submit on the server.',
      ],
    ],
  },
  {
    variants: FRONT,
    stem: 'animation',
    description: 'Add {V} animations and transitions that stay smooth.',
    sections: [
      [
        'Steps',
        'Animate transform and opacity only, respect reduced-motion preferences, and measure dropped frames on a slow device.',
      ],
    ],
  },
  {
    variants: SERVICES,
    stem: 'triage',
    description: 'Triage incoming {V} items: label, prioritise and assign.',
    sections: [
      [
        'Steps',
        'Read each new ticket or issue, find duplicates, add labels and a priority, and assign an owner; close what cannot be reproduced.',
      ],
    ],
  },
  {
    variants: SERVICES,
    stem: 'release-notes',
    description: 'Draft release notes from {V} activity.',
    sections: [
      [
        'Steps',
        'Collect what was merged or closed since the last release, group it into features, fixes and breaking changes, and write it for users.',
      ],
    ],
  },
  {
    variants: SERVICES,
    stem: 'weekly-report',
    description: 'Summarise a week of {V} activity for stakeholders.',
    sections: [
      [
        'Steps',
        'Pull the last seven days of activity, count what moved, highlight risks and blockers, and post a short digest for managers.',
      ],
    ],
  },
  {
    variants: SERVICES,
    stem: 'webhook-integration',
    description: 'Receive and verify {V} webhooks in your service.',
    sections: [
      [
        'Steps',
        'Expose an endpoint, check the signature header with the shared secret, respond quickly, and process the event in a background job with retries.',
      ],
    ],
  },
  {
    variants: SERVICES,
    stem: 'data-export',
    description: 'Export {V} data through its API for analysis or backup.',
    sections: [
      [
        'Steps',
        'Authenticate with a token, page through every record, respect rate limits, and write the results to CSV or a warehouse.',
      ],
    ],
  },
  {
    variants: SERVICES,
    stem: 'onboarding',
    description: 'Automate {V} onboarding and offboarding of team members.',
    sections: [
      [
        'Steps',
        'Invite new hires to the right groups and projects on their first day, and remove access for people who leave.',
      ],
    ],
  },
];

/** One-off skills, as every catalog has them. */
const SINGLES: CatalogSkill[] = [
  {
    name: 'brand-guidelines',
    description: 'Apply the company brand: colours, typography and logo usage.',
    body: '## When to use\nSlides, posters or web pages must look like the company made them.\n## Rules\nUse the primary palette, the house typeface, and keep clear space around the logo.',
  },
  {
    name: 'meeting-minutes',
    description: 'Turn a meeting transcript into minutes with decisions and action items.',
    body: '## Steps\nRead the recording transcript, list who attended, what was decided, and each follow-up task with an owner and a due date.',
  },
  {
    name: 'resume-review',
    description: 'Review a CV and suggest improvements for a target job.',
    body: '## Steps\nCompare the candidate experience with the job posting, rewrite bullets as achievements with numbers, and cut it to one or two pages.',
  },
  {
    name: 'cover-letter-writer',
    description: 'Draft a cover letter tailored to a job posting.',
    body: '## Steps\nOpen with why this company, connect two past achievements to the role, and close with a call to action.',
  },
  {
    name: 'frontend-design',
    description: 'Design distinctive, production-grade web interfaces.',
    body: '## Principles\nA clear visual hierarchy, generous whitespace, a bold type scale and a restrained palette; avoid generic templates.',
  },
  {
    name: 'canvas-design',
    description: 'Create visual art and posters as images.',
    body: '## Steps\nChoose a composition, a palette and shapes, render to a PNG, and iterate on balance and contrast.',
  },
  {
    name: 'algorithmic-art',
    description: 'Make generative art with code and seeded randomness.',
    body: '## Steps\nWrite a p5.js sketch with a fixed seed, use noise fields and particles, and export frames.',
  },
  {
    name: 'slack-gif-creator',
    description: 'Create animated GIFs sized for chat emoji and reactions.',
    body: '## Steps\nKeep it under the size limit, loop seamlessly, and use few colours so it stays small.',
  },
  {
    name: 'mcp-builder',
    description: 'Build Model Context Protocol servers that expose tools to agents.',
    body: '## Steps\nDesign tools around user tasks, validate inputs with schemas, return concise results, and test with an inspector.',
  },
  {
    name: 'skill-creator',
    description: 'Write new agent skills with a SKILL.md and bundled resources.',
    body: '## Steps\nName the skill, write a description that says when to use it, keep the body short, and move details into reference files.',
  },
  {
    name: 'internal-comms',
    description: 'Write internal announcements, status updates and newsletters.',
    body: '## Steps\nLead with what changed and who is affected, keep it short, and link to details.',
  },
  {
    name: 'changelog-keeper',
    description: 'Maintain a CHANGELOG following Keep a Changelog conventions.',
    body: '## Steps\nAdd entries under Unreleased as work merges, group by Added, Changed, Fixed, and date each version.',
  },
  {
    name: 'commit-message-writer',
    description: 'Write clear git commit messages from a staged diff.',
    body: '## Steps\nSummarise the change in the imperative in under 72 characters, then explain why in the body.',
  },
  {
    name: 'regex-helper',
    description: 'Build and explain regular expressions with test cases.',
    body: '## Steps\nState what must match and what must not, build the pattern piece by piece, and test it on edge cases.',
  },
  {
    name: 'sql-explainer',
    description: 'Explain what a SQL statement does in plain language.',
    body: '## Steps\nWalk through the joins, filters and grouping in the order the database runs them.',
  },
  {
    name: 'docker-image-slimming',
    description: 'Make Docker images smaller and faster to build.',
    body: '## Steps\nUse multi-stage builds, a minimal base image, order layers for caching, and remove build tools from the final stage.',
  },
  {
    name: 'terraform-module',
    description: 'Write reusable Terraform modules with inputs, outputs and tests.',
    body: '## Steps\nDefine variables with types and defaults, expose outputs, pin provider versions, and plan in CI.',
  },
  {
    name: 'log-analysis',
    description: 'Analyse application logs to find errors and patterns.',
    body: '## Steps\nParse the log lines, group errors by message, find when they started and correlate with deploys.',
  },
  {
    name: 'threat-modeling',
    description: 'Threat-model a system design with STRIDE.',
    body: '## Steps\nDraw the data flows and trust boundaries, list threats per element, and rank mitigations.',
  },
  {
    name: 'gdpr-request-handler',
    description: 'Handle GDPR data subject requests: access, erasure and portability.',
    body: '## Steps\nVerify the requester identity, find their personal data in every system, and answer within one month.',
  },
  {
    name: 'invoice-reconciliation',
    description: 'Reconcile invoices against bank transactions.',
    body: '## Steps\nMatch payments to invoices by amount, date and reference, and list what is unpaid or paid twice.',
  },
  {
    name: 'expense-report',
    description: 'Prepare expense reports from receipts.',
    body: '## Steps\nRead each receipt photo, categorise the spend, convert currencies, and fill the reimbursement sheet.',
  },
  {
    name: 'okr-drafting',
    description: 'Draft quarterly objectives and key results.',
    body: '## Steps\nWrite an inspiring objective, three measurable key results, and check each has an owner and a baseline.',
  },
  {
    name: 'user-interview-synthesis',
    description: 'Synthesise user research interviews into insights.',
    body: '## Steps\nTag quotes by theme, cluster them, and write each insight with its evidence and how many people said it.',
  },
  {
    name: 'competitive-analysis',
    description: 'Compare competitor products feature by feature.',
    body: '## Steps\nList rivals, build a feature and pricing matrix, and note where we win or lose.',
  },
  {
    name: 'seo-audit',
    description: 'Audit a website for search engine optimisation.',
    body: '## Steps\nCheck titles and meta descriptions, broken links, page speed, sitemap and structured data.',
  },
  {
    name: 'email-newsletter',
    description: 'Write and lay out an email newsletter.',
    body: '## Steps\nOne main story, short sections, a clear call to action, and a plain-text version.',
  },
  {
    name: 'translation-review',
    description: 'Review translations for accuracy and tone.',
    body: '## Steps\nCompare source and target sentence by sentence, check terminology and formality, and flag untranslated strings.',
  },
  {
    name: 'data-visualization',
    description: 'Choose and build the right chart for a dataset.',
    body: '## Steps\nPick the chart by the question (trend, comparison, distribution), label axes, and avoid dual axes and 3D.',
  },
  {
    name: 'statistical-testing',
    description: 'Pick and run the right statistical test for an experiment.',
    body: '## Steps\nState the hypothesis, check assumptions, compute the p-value and the effect size, and report confidence intervals for A/B tests.',
  },
];

const fill = (text: string, display: string) => text.replaceAll('{V}', display);

function familySkills(family: Family): CatalogSkill[] {
  return family.variants.map(([slug, display]) => ({
    name: `${slug}-${family.stem}`,
    description: fill(family.description, display),
    body: `# ${fill(family.description, display).replace(/\.$/, '')}\n\n${family.sections
      .map(([heading, text]) => `## ${heading}\n\n${fill(text, display)}\n`)
      .join('\n')}`,
  }));
}

/** The realistic catalog: 504 skills (family skills in family order, then the one-offs). */
export function realisticCatalog(): CatalogSkill[] {
  return [...FAMILIES.flatMap(familySkills), ...SINGLES];
}

/** Written before any ranker ran on the catalog (see the header). */
export const QUERIES: SearchQuery[] = [
  // Realistic catalog: a person describing the task or the symptom.
  {
    catalog: 'realistic',
    query: 'fill in the fields of a government application document in pdf',
    expect: ['pdf-form-filling'],
  },
  {
    catalog: 'realistic',
    query: 'my pytest suite passes locally but randomly breaks on the build server',
    expect: ['python-flaky-test-triage'],
  },
  {
    catalog: 'realistic',
    query: 'postgres lookup by customer takes ages, full table scan',
    expect: ['postgres-query-tuning'],
  },
  {
    catalog: 'realistic',
    query: 'the aws bill went up a lot this month, what can we turn off',
    expect: ['aws-cost-audit'],
  },
  {
    catalog: 'realistic',
    query: 'remove social security numbers before sharing a word file',
    expect: ['docx-redaction'],
  },
  {
    catalog: 'realistic',
    query: 'my go service keeps eating RAM until the container is OOM killed',
    expect: ['go-memory-leak-hunt'],
  },
  {
    catalog: 'realistic',
    query: 'rust program freezes when two threads wait on each other',
    expect: ['rust-concurrency-debugging'],
  },
  {
    catalog: 'realistic',
    query: 'someone pushed our azure key to a public repo, replace it',
    expect: ['azure-secrets-rotation'],
  },
  {
    catalog: 'realistic',
    query: 'the website is down right now on kubernetes, what do I do',
    expect: ['kubernetes-incident-runbook'],
  },
  {
    catalog: 'realistic',
    query: 'nextjs warns the html from the server does not match the client',
    expect: ['nextjs-hydration-debugging'],
  },
  {
    catalog: 'realistic',
    query: 'react site loads very slowly on mobile, too much javascript',
    expect: ['react-bundle-size'],
  },
  {
    catalog: 'realistic',
    query: 'make a vue app usable with a screen reader and keyboard',
    expect: ['vue-accessibility-audit'],
  },
  {
    catalog: 'realistic',
    query: 'produce hundreds of personalised contracts in word from a spreadsheet of names',
    expect: ['docx-template-generation'],
  },
  {
    catalog: 'realistic',
    query: 'get the tables out of a pdf report into a spreadsheet',
    expect: ['pdf-table-extraction'],
  },
  { catalog: 'realistic', query: 'combine several pdfs into a single file', expect: ['pdf-merge-split'] },
  {
    catalog: 'realistic',
    query: 'turn a markdown file into something else like html or docx',
    expect: ['markdown-conversion'],
  },
  {
    catalog: 'realistic',
    query: 'summarise what the team did in jira over the last seven days for my manager',
    expect: ['jira-weekly-report'],
  },
  {
    catalog: 'realistic',
    query: 'check that incoming stripe events are genuine using the signing secret',
    expect: ['stripe-webhook-integration'],
  },
  {
    catalog: 'realistic',
    query: 'pull every record out of salesforce into csv files',
    expect: ['salesforce-data-export'],
  },
  {
    catalog: 'realistic',
    query: 'give new hires access to the right slack channels on day one',
    expect: ['slack-onboarding'],
  },
  {
    catalog: 'realistic',
    query: 'write up what changed since the last github release for users',
    expect: ['github-release-notes'],
  },
  {
    catalog: 'realistic',
    query: 'sort through new zendesk tickets and decide who handles each',
    expect: ['zendesk-triage'],
  },
  {
    catalog: 'realistic',
    query: 'java app got slower after the last change, where is the time going',
    expect: ['java-performance-profiling'],
  },
  {
    catalog: 'realistic',
    query: 'bump our outdated ruby gems without breaking things',
    expect: ['ruby-dependency-upgrade'],
  },
  {
    catalog: 'realistic',
    query: 'our typescript code swallows exceptions in empty catch blocks',
    expect: ['typescript-error-handling'],
  },
  {
    catalog: 'realistic',
    query: 'publish a new version of my kotlin library to the registry',
    expect: ['kotlin-package-release'],
  },
  {
    catalog: 'realistic',
    query: 'add automatic formatting checks to a php project',
    expect: ['php-linting-setup'],
  },
  { catalog: 'realistic', query: 'look over a colleague’s swift PR', expect: ['swift-code-review'] },
  {
    catalog: 'realistic',
    query: 'call a rest api from c# using its swagger file instead of handwritten requests',
    expect: ['csharp-api-client'],
  },
  {
    catalog: 'realistic',
    query: 'nothing in my elixir module is covered by tests yet',
    expect: ['elixir-unit-testing'],
  },
  {
    catalog: 'realistic',
    query: 'add a column to a big mysql table while the app keeps running',
    expect: ['mysql-schema-migration'],
  },
  {
    catalog: 'realistic',
    query: 'someone deleted rows in mongodb by accident, get them back',
    expect: ['mongodb-backup-restore'],
  },
  {
    catalog: 'realistic',
    query: 'send read only traffic to a second postgres server',
    expect: ['postgres-replication-setup'],
  },
  {
    catalog: 'realistic',
    query: 'nightly job to load data into snowflake incrementally',
    expect: ['snowflake-etl-pipeline'],
  },
  {
    catalog: 'realistic',
    query: 'how should I lay out my dynamodb tables for the way the app reads',
    expect: ['dynamodb-data-modeling'],
  },
  {
    catalog: 'realistic',
    query: 'ship to google cloud automatically whenever we merge',
    expect: ['gcp-deploy-pipeline'],
  },
  {
    catalog: 'realistic',
    query: 'who has admin rights in our aws account and should they',
    expect: ['aws-iam-review'],
  },
  {
    catalog: 'realistic',
    query: 'add more machines on heroku when traffic spikes',
    expect: ['heroku-autoscaling'],
  },
  {
    catalog: 'realistic',
    query: 'scanned epub, need the words and the author name out of it',
    expect: ['epub-text-extraction'],
  },
  {
    catalog: 'realistic',
    query: 'is this powerpoint deck usable by blind people',
    expect: ['pptx-accessibility-check'],
  },
  {
    catalog: 'realistic',
    query: 'complete a tax form that came as an excel workbook',
    expect: ['xlsx-form-filling'],
  },
  {
    catalog: 'realistic',
    query: 'svelte inputs should show an error under the field while typing',
    expect: ['svelte-form-validation'],
  },
  {
    catalog: 'realistic',
    query: 'angular data is passed through too many layers and goes stale',
    expect: ['angular-state-management'],
  },
  {
    catalog: 'realistic',
    query: 'click through a solid component in tests like a user would',
    expect: ['solid-component-testing'],
  },
  {
    catalog: 'realistic',
    query: 'smooth transitions in astro that respect reduced motion',
    expect: ['astro-animation'],
  },
  {
    catalog: 'realistic',
    query: 'turn the recording of our call into a list of decisions and todos',
    expect: ['meeting-minutes'],
  },
  { catalog: 'realistic', query: 'improve my cv for a data engineer job', expect: ['resume-review'] },
  {
    catalog: 'realistic',
    query: 'our docker containers are huge, cut them down',
    expect: ['docker-image-slimming'],
  },
  {
    catalog: 'realistic',
    query: 'match bank payments with the bills we sent',
    expect: ['invoice-reconciliation'],
  },
  {
    catalog: 'realistic',
    query: 'a customer asked us to delete all their personal data',
    expect: ['gdpr-request-handler'],
  },
  {
    catalog: 'realistic',
    query: 'is the difference in my a/b test real or chance',
    expect: ['statistical-testing'],
  },
  {
    catalog: 'realistic',
    query: 'what kind of chart should I use to show sales over time',
    expect: ['data-visualization'],
  },
  {
    catalog: 'realistic',
    query: 'make slides that follow our company colours and logo rules',
    expect: ['brand-guidelines'],
  },
  {
    catalog: 'realistic',
    query: 'write a pattern that matches email addresses and explain it',
    expect: ['regex-helper'],
  },
  {
    catalog: 'realistic',
    query: 'create a new skill for agents with a good description',
    expect: ['skill-creator'],
  },
  { catalog: 'realistic', query: 'build a server that gives an AI agent tools', expect: ['mcp-builder'] },
  { catalog: 'realistic', query: 'generative art sketch with random noise', expect: ['algorithmic-art'] },
  { catalog: 'realistic', query: 'why is my page not ranking on google', expect: ['seo-audit'] },
  {
    catalog: 'realistic',
    query: 'write a good message for my staged git changes',
    expect: ['commit-message-writer'],
  },
  {
    catalog: 'realistic',
    query: 'what could an attacker do to this architecture',
    expect: ['threat-modeling'],
  },
  {
    catalog: 'realistic',
    query: 'turn receipt photos into a reimbursement claim',
    expect: ['expense-report'],
  },
  {
    catalog: 'realistic',
    query: 'sentry alert fired at 3am and error rates are up',
    expect: ['sentry-triage'],
  },
  {
    catalog: 'realistic',
    query: 'clickhouse dashboard query scans too much and is slow',
    expect: ['clickhouse-query-tuning'],
  },
  {
    catalog: 'realistic',
    query: 'black out names and addresses in a pdf so they cannot be recovered',
    expect: ['pdf-redaction'],
  },
  {
    catalog: 'realistic',
    query: 'reusable terraform code with variables and outputs',
    expect: ['terraform-module'],
  },
  {
    catalog: 'realistic',
    query: 'test order changes make my scala specs fail now and then',
    expect: ['scala-flaky-test-triage'],
  },
  // Synthetic catalog (bench/synthetic.ts): skills differ only by their number.
  { catalog: 'synthetic', query: 'benchmark skill number 417', expect: ['skill-0417'] },
  { catalog: 'synthetic', query: 'synthetic skill 42', expect: ['skill-0042'] },
  { catalog: 'synthetic', query: 'the synthetic one numbered 999', expect: ['skill-0999'] },
  { catalog: 'synthetic', query: 'skill 0007 for benchmarks', expect: ['skill-0007'] },
  { catalog: 'synthetic', query: 'number 250 of the synthetic set', expect: ['skill-0250'] },
  { catalog: 'synthetic', query: 'skill-0613', expect: ['skill-0613'] },
];
