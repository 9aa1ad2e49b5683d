/**
 * Queries for the real-catalog search bench (bench/searchReal.ts), written as users would type them after reading
 * the catalogs' skill names and descriptions (and, for `body`, a SKILL.md's headings). Each names the catalog it
 * was written for and the skills that answer it there (any of them counts).
 *
 * Kinds: `named` names the product, tool or standard the skill is for; `paraphrase` says the need in other words;
 * `body` asks for a detail only the SKILL.md body has. (Queries that are a skill's own name are generated from the
 * catalogs at run time: bench/searchReal.ts.)
 *
 * MEASURE was written first, before any ranking was tuned, and is only measured; TUNE was written afterwards and is
 * the set changes were tried on.
 */

export type QueryKind = 'named' | 'paraphrase' | 'body';

export interface RealQuery {
  /** The catalog's directory name, `<owner>+<name>`. */
  catalog: string;
  kind: QueryKind;
  query: string;
  /** Names of the skills that answer it. */
  expect: readonly string[];
}

const ANTHROPIC = 'anthropics+skills';
const OBRA = 'obra+superpowers';
const COMPOSIO = 'ComposioHQ+awesome-claude-skills';
const TOB = 'trailofbits+skills';
const KDENSE = 'K-Dense-AI+claude-scientific-skills';
const WSHOBSON = 'wshobson+agents';

/** The catalogs the queries are written for. */
export const QUERY_CATALOGS = [ANTHROPIC, OBRA, COMPOSIO, TOB, KDENSE, WSHOBSON] as const;

type Row = readonly [kind: QueryKind, query: string, ...expect: string[]];

const rows = (catalog: string, list: readonly Row[]): RealQuery[] =>
  list.map(([kind, query, ...expect]) => ({ catalog, kind, query, expect }));

/** Written first; only measured. */
export const MEASURE: readonly RealQuery[] = [
  ...rows(ANTHROPIC, [
    ['named', 'merge two PDFs into one', 'pdf'],
    ['named', 'convert a Word document with tracked changes', 'docx'],
    ['named', 'make an animated GIF for Slack', 'slack-gif-creator'],
    ['named', 'test my local web app with Playwright', 'webapp-testing'],
    ['named', 'build an MCP server for the GitHub API', 'mcp-builder'],
    ['named', 'p5.js generative art with a random seed', 'algorithmic-art'],
    ['paraphrase', 'I need a slide deck for the quarterly pitch', 'pptx'],
    ['paraphrase', 'fix the formulas in my spreadsheet that show #REF errors', 'xlsx'],
    ['paraphrase', 'write the weekly update to the whole company', 'internal-comms'],
    ['paraphrase', 'help me draft a design proposal together step by step', 'doc-coauthoring'],
    ['paraphrase', 'make our landing page look less generic', 'frontend-design'],
    ['paraphrase', 'a poster for the gallery opening', 'canvas-design'],
    ['body', 'extract tables from a PDF with pdfplumber', 'pdf'],
    ['body', 'accept all tracked changes in a document', 'docx'],
    ['body', 'blue text for hardcoded inputs in a financial model', 'xlsx'],
  ]),
  ...rows(OBRA, [
    [
      'paraphrase',
      "the tests pass but I'm not sure it really works, check before I say it's done",
      'verification-before-completion',
    ],
    [
      'paraphrase',
      "there's a weird bug I can't figure out, find what actually causes it",
      'systematic-debugging',
    ],
    ['paraphrase', 'write the failing test first, then the code', 'test-driven-development'],
    [
      'paraphrase',
      'I have three unrelated failures, work on them at the same time',
      'dispatching-parallel-agents',
    ],
    [
      'paraphrase',
      'work on a feature in a separate checkout without touching my main directory',
      'using-git-worktrees',
    ],
    [
      'paraphrase',
      'all done with the feature, should I merge it or open a pull request',
      'finishing-a-development-branch',
    ],
    ['paraphrase', "the reviewer left comments I'm not sure I agree with", 'receiving-code-review'],
    ['paraphrase', 'turn this spec into a step-by-step implementation plan', 'writing-plans'],
    ['paraphrase', "let's think through ideas for a new feature before coding", 'brainstorming'],
    ['paraphrase', 'get someone to look over my changes before I merge', 'requesting-code-review'],
    ['named', 'git worktree for an isolated workspace', 'using-git-worktrees'],
    ['named', 'TDD red green refactor', 'test-driven-development'],
    ['body', 'four phases: root cause, pattern analysis, hypothesis, implementation', 'systematic-debugging'],
  ]),
  ...rows(COMPOSIO, [
    ['named', 'schedule a Google Meet call with the team', 'googlemeet-automation'],
    ['named', 'add photos to an album in Google Photos', 'googlephotos-automation'],
    ['named', 'send a transactional email with Mailersend', 'mailersend-automation'],
    ['named', 'check which of my websites are down on UptimeRobot', 'uptimerobot-automation'],
    ['named', 'get the weather forecast for Berlin from OpenWeather', 'openweather-api-automation'],
    ['named', 'make a short link with TinyURL', 'tinyurl-automation'],
    ['named', 'scan a suspicious file hash on VirusTotal', 'virustotal-automation'],
    ['named', 'log my morning run to Strava', 'strava-automation'],
    ['named', 'post a tweet thread with Typefully', 'typefully-automation'],
    ['named', 'suspend a user account in Google Workspace admin', 'google-admin-automation'],
    ['paraphrase', 'save a YouTube video to my laptop', 'youtube-downloader'],
    ['paraphrase', 'pick a random winner for our giveaway', 'raffle-winner-picker'],
    ['paraphrase', 'sort my receipts for the tax return', 'invoice-organizer'],
    ['paraphrase', 'write release notes from the git history', 'changelog-generator'],
    ['paraphrase', 'find a catchy available web address for my startup', 'domain-name-brainstormer'],
    ['body', 'find free time slots before scheduling a Meet', 'googlemeet-automation'],
  ]),
  ...rows(TOB, [
    ['named', 'write a Semgrep rule to catch this pattern', 'semgrep-rule-creator'],
    ['named', 'fuzz my Rust crate with cargo', 'cargo-fuzz'],
    ['named', 'parse the SARIF output from CodeQL', 'sarif-parsing'],
    ['named', 'write a YARA rule for this malware sample', 'yara-rule-authoring'],
    ['named', 'audit a Solana program for vulnerabilities', 'solana-vulnerability-scanner'],
    ['named', 'set up uv and ruff for a new python project', 'modern-python'],
    ['named', 'search a Burp Suite project file', 'burpsuite-project-parser'],
    [
      'paraphrase',
      'is this crypto code leaking secrets through how long it takes?',
      'constant-time-analysis',
      'constant-time-testing',
    ],
    ['paraphrase', 'we found one bug, find the other places with the same mistake', 'variant-analysis'],
    ['paraphrase', 'check our dependencies for risky packages', 'supply-chain-risk-auditor'],
    ['paraphrase', 'clean up old merged branches', 'git-cleanup'],
    ['paraphrase', 'is this reported security bug real or a false alarm', 'fp-check'],
    ['paraphrase', 'are secret keys wiped from memory after use', 'zeroize-audit'],
    ['paraphrase', 'get the codebase ready before the auditors arrive', 'audit-prep-assistant'],
    ['body', 'squash-merged branches need a force delete', 'git-cleanup'],
    ['body', 'dangerous defaults and configuration cliffs in an API', 'sharp-edges'],
  ]),
  ...rows(KDENSE, [
    ['named', 'read a DICOM file and anonymize it', 'pydicom'],
    ['named', 'single-cell RNA-seq clustering and marker genes', 'scanpy'],
    ['named', 'turn SMILES strings into molecular fingerprints', 'rdkit', 'datamol', 'molfeat'],
    ['named', 'Bayesian hierarchical model with MCMC sampling', 'pymc'],
    ['named', 'run a quantum circuit on IBM hardware', 'qiskit'],
    ['named', 'convert a PDF to Markdown', 'markitdown'],
    ['named', 'Cox proportional hazards survival model', 'scikit-survival'],
    ['named', 'write an NIH grant proposal', 'research-grants'],
    ['paraphrase', 'predict how a drug molecule sits in a protein pocket', 'diffdock'],
    ['paraphrase', "my dataframe doesn't fit in memory", 'dask', 'vaex'],
    ['paraphrase', 'which genes change between treated and control samples from bulk counts', 'pydeseq2'],
    ['paraphrase', "explain which features drove my model's predictions", 'shap'],
    ['paraphrase', "forecast next month's sales from the past years", 'timesfm-forecasting'],
    ['paraphrase', 'simulate customers waiting in line at a bank counter', 'simpy'],
    ['paraphrase', 'heart rate variability from an ECG recording', 'neurokit2'],
    ['body', 'prior predictive check before fitting', 'pymc'],
  ]),
  ...rows(WSHOBSON, [
    ['named', 'set up Prometheus to scrape my services', 'prometheus-configuration'],
    ['named', 'take Stripe payments with webhooks', 'stripe-integration'],
    ['named', 'a GitHub Actions workflow that runs the tests', 'github-actions-templates'],
    ['named', 'package my app as a Helm chart', 'helm-chart-scaffolding'],
    ['named', 'canary release with Istio', 'istio-traffic-management'],
    ['named', 'Airflow DAG with sensors', 'airflow-dag-patterns'],
    ['named', 'speed up Turborepo builds with a remote cache', 'turborepo-caching'],
    ['paraphrase', "write up last night's outage without blaming anyone", 'postmortem-writing'],
    ['paraphrase', 'handing over the pager to the next person', 'on-call-handoff-patterns'],
    ['paraphrase', 'this database query is slow, look at the plan', 'sql-optimization-patterns'],
    ['paraphrase', 'store credit card numbers safely', 'pci-compliance'],
    ['paraphrase', 'my shell script breaks when a variable is empty', 'bash-defensive-patterns'],
    ['paraphrase', 'keep a record of why we chose this database', 'architecture-decision-records'],
    [
      'paraphrase',
      'make the site usable with a screen reader',
      'screen-reader-testing',
      'wcag-audit-patterns',
      'accessibility-compliance',
    ],
    ['paraphrase', 'retry failed HTTP calls with growing waits in python', 'python-resilience'],
    ['body', 'retries with jitter using tenacity', 'python-resilience'],
  ]),
];

/** Written after MEASURE; the set rankings were tuned on. */
export const TUNE: readonly RealQuery[] = [
  ...rows(ANTHROPIC, [
    ['named', 'rotate pages in a PDF', 'pdf'],
    ['named', 'create a PowerPoint presentation', 'pptx'],
    ['named', 'edit an Excel sheet and keep the formulas', 'xlsx'],
    ['named', 'React and Tailwind artifact with shadcn components', 'web-artifacts-builder'],
    ['paraphrase', 'make a new skill and check that it triggers', 'skill-creator'],
    ['paraphrase', 'give these slides a consistent look with fonts and colours', 'theme-factory'],
    ['paraphrase', 'use our company colours and fonts on this document', 'brand-guidelines'],
    ['paraphrase', 'take a screenshot of my page in a headless browser', 'webapp-testing'],
    ['body', 'fill in form fields of a PDF', 'pdf'],
    ['body', 'recalculate formulas and check for errors after editing a workbook', 'xlsx'],
  ]),
  ...rows(OBRA, [
    ['paraphrase', 'carry out the plan we wrote yesterday', 'executing-plans'],
    [
      'paraphrase',
      'hand each task of the plan to a fresh helper in this session',
      'subagent-driven-development',
    ],
    ['paraphrase', 'how do I make a new skill', 'writing-skills'],
    ['paraphrase', 'how should I find and use the skills I have', 'using-superpowers'],
    ['paraphrase', 'the build fails and I do not know why', 'systematic-debugging'],
    [
      'paraphrase',
      'before claiming the fix works run the commands and read the output',
      'verification-before-completion',
    ],
    ['named', 'pull request review feedback', 'receiving-code-review'],
    ['body', 'watch the test fail before writing code', 'test-driven-development'],
  ]),
  ...rows(COMPOSIO, [
    ['named', 'run a SQL query in BigQuery', 'googlebigquery-automation'],
    ['named', 'create a Google Doc from a template', 'googledocs-automation'],
    ['named', 'geocode an address with Google Maps', 'google-maps-automation'],
    ['named', 'send an SMS with Telnyx', 'telnyx-automation'],
    ['named', 'add a task to TickTick', 'ticktick-automation'],
    ['named', 'check my budget in YNAB', 'ynab-automation'],
    ['named', 'upload an image to ImageKit', 'imagekit-io-automation'],
    ['named', 'fetch LangSmith traces to debug my agent', 'langsmith-fetch'],
    ['paraphrase', 'tailor my CV to this job posting', 'tailored-resume-generator'],
    ['paraphrase', 'make my screenshots look sharper', 'image-enhancer'],
    ['paraphrase', 'what are my competitors advertising on Facebook', 'competitive-ads-extractor'],
    ['body', 'list search analytics for my site in Search Console', 'google-search-console-automation'],
  ]),
  ...rows(TOB, [
    ['named', 'run CodeQL on this repository', 'codeql'],
    ['named', 'fuzz a Python library with Atheris', 'atheris'],
    ['named', 'review unsafe Rust code for memory safety', 'rust-review'],
    ['named', 'generate a devcontainer for this project', 'devcontainer-setup'],
    ['named', 'Wycheproof test vectors for my ECDSA code', 'wycheproof'],
    ['paraphrase', 'review this pull request for security issues', 'differential-review'],
    ['paraphrase', 'where can an attacker call into this smart contract', 'entry-point-analyzer'],
    ['paraphrase', 'APIs that make it easy to shoot yourself in the foot', 'sharp-edges'],
    ['paraphrase', 'prepare this repository to be made public', 'open-sourcing'],
    ['body', 'decision tree for migrating from requirements.txt and pip', 'modern-python'],
  ]),
  ...rows(KDENSE, [
    ['named', 'plot with matplotlib and customise every element', 'matplotlib'],
    ['named', 'reinforcement learning with PPO', 'stable-baselines3'],
    ['named', 'read flow cytometry FCS files', 'flowio'],
    ['named', 'query UniProt and KEGG together', 'bioservices'],
    ['paraphrase', 'draw a family tree of species from aligned sequences', 'phylogenetics', 'etetoolkit'],
    ['paraphrase', 'check whether a compound looks like a drug', 'medchem'],
    ['paraphrase', 'solve this integral symbolically', 'sympy'],
    ['paraphrase', 'how much GPU and memory does this machine have', 'get-available-resources'],
    ['body', 'window functions with over in a dataframe', 'polars'],
    ['body', 'select the right explainer for a tree model', 'shap'],
  ]),
  ...rows(WSHOBSON, [
    ['named', 'Grafana dashboard for my service metrics', 'grafana-dashboards'],
    ['named', 'Terraform modules for AWS', 'terraform-module-library'],
    ['named', 'write tests for shell scripts with Bats', 'bats-testing-patterns'],
    ['named', 'accept PayPal subscriptions', 'paypal-integration'],
    ['paraphrase', 'track a request as it moves through many services', 'distributed-tracing'],
    ['paraphrase', 'how much of a market could we realistically capture', 'market-sizing-analysis'],
    ['paraphrase', 'make sure personal data of EU users is handled lawfully', 'gdpr-data-handling'],
    ['paraphrase', 'encrypted traffic between every pair of services', 'mtls-configuration'],
    ['body', 'five whys analysis of an incident', 'postmortem-writing'],
    ['body', 'explain analyze to see the execution plan', 'sql-optimization-patterns'],
  ]),
];
