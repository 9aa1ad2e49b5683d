#!/usr/bin/env bash
# Starts skillpin over Streamable HTTP, runs scripts/conformance.sh against it,
# stops it, and exits with the conformance status. Builds nothing itself.
#
#   scripts/conformance-run.sh
#   CONFIG=test/fixtures/conformance.yaml PORT=3918 scripts/conformance-run.sh
#
# Environment:
#   CONFIG              skillpin config (default test/fixtures/conformance.yaml)
#   PORT                port on 127.0.0.1 (default: a free one)
#   STARTUP_TIMEOUT_S   how long to wait for the port to answer (default 60)
#   SERVER_CMD          run this (with bash -c; PORT and CONFIG exported)
#                       instead of the built skillpin CLI (bin/skillpin.js; `npm run
#                       build` writes dist/), e.g. to try another server
#   WITH_TOKEN=1        serve with a static bearer token (CONFIG defaults to
#                       test/fixtures/conformance-auth.yaml; the token is
#                       SKILLPIN_CONFORMANCE_TOKEN, random when unset): check
#                       that /mcp answers 401 without it, then run the suite
#                       through scripts/conformance-proxy.ts, which adds it
#   plus everything scripts/conformance.sh reads (CONFORMANCE_SCENARIOS, ...).
#
# The server's stderr goes to .skillpin/conformance/server.log and is printed
# when the server does not come up or the conformance run fails.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
WITH_TOKEN="${WITH_TOKEN:-0}"
if [[ "$WITH_TOKEN" == 1 ]]; then
  CONFIG="${CONFIG:-test/fixtures/conformance-auth.yaml}"
  SKILLPIN_CONFORMANCE_TOKEN="${SKILLPIN_CONFORMANCE_TOKEN:-$(node -e 'console.log(require("node:crypto").randomBytes(24).toString("hex"))')}"
  export SKILLPIN_CONFORMANCE_TOKEN
else
  CONFIG="${CONFIG:-test/fixtures/conformance.yaml}"
fi
STARTUP_TIMEOUT_S="${STARTUP_TIMEOUT_S:-60}"
CACHE="${SKILLPIN_CONFORMANCE_DIR:-$ROOT/.skillpin/conformance}"
LOG="$CACHE/server.log"

log() { printf '[conformance-run] %s\n' "$*" >&2; }

port_answers() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

free_port() { node -e 'const s=require("node:net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
if [[ -z "${PORT:-}" ]]; then
  PORT="$(free_port)"
fi
if port_answers "$PORT"; then
  log "error: something already listens on 127.0.0.1:$PORT"
  exit 2
fi
[[ -f "$CONFIG" ]] || log "warning: $CONFIG does not exist (the server will probably refuse to start)"

# Install the pinned suite first, so a slow install does not count against
# the server's startup wait and install errors show up before anything runs.
bash "$ROOT/scripts/conformance.sh" --install

mkdir -p "$CACHE"
: >"$LOG"
export PORT CONFIG
if [[ -n "${SERVER_CMD:-}" ]]; then
  server_cmd=(bash -c "$SERVER_CMD")
else
  server_cmd=(node bin/skillpin.js serve --config "$CONFIG" --http "127.0.0.1:$PORT")
fi
log "starting: ${server_cmd[*]} (log: ${LOG#"$ROOT"/})"
# setsid: the server (and anything SERVER_CMD starts) gets its own process
# group, so the whole tree can be stopped with one signal to the group.
if command -v setsid >/dev/null 2>&1; then
  setsid "${server_cmd[@]}" </dev/null >>"$LOG" 2>&1 &
else
  "${server_cmd[@]}" </dev/null >>"$LOG" 2>&1 &
fi
SERVER_PID=$!
PROXY_PID=""

# shellcheck disable=SC2317 # called from the EXIT trap
stop_group() {
  # The process group when setsid made one (npx, tsx and node alike), else just the process.
  kill -TERM -- "-$1" 2>/dev/null || kill -TERM "$1" 2>/dev/null || true
  for _ in $(seq 1 50); do
    kill -0 -- "-$1" 2>/dev/null || kill -0 "$1" 2>/dev/null || break
    sleep 0.1
  done
  kill -KILL -- "-$1" 2>/dev/null || kill -KILL "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
}
# shellcheck disable=SC2317 # called from the EXIT trap
stop_server() {
  if [[ -n "$PROXY_PID" ]]; then stop_group "$PROXY_PID"; fi
  stop_group "$SERVER_PID"
}
trap stop_server EXIT
trap 'exit 130' INT TERM

show_log() {
  log "---- server log (last 60 lines) ----"
  tail -n 60 "$LOG" >&2 || true
  log "------------------------------------"
}

started=$SECONDS
until port_answers "$PORT"; do
  if ! kill -0 "$SERVER_PID" 2>/dev/null; then
    log "error: the server exited before listening on 127.0.0.1:$PORT"
    show_log
    exit 1
  fi
  if ((SECONDS - started >= STARTUP_TIMEOUT_S)); then
    log "error: 127.0.0.1:$PORT did not answer within ${STARTUP_TIMEOUT_S} s"
    show_log
    exit 1
  fi
  sleep 0.25
done
log "server answers on 127.0.0.1:$PORT after $((SECONDS - started)) s"

TARGET="http://127.0.0.1:$PORT/mcp"
if [[ "$WITH_TOKEN" == 1 ]]; then
  # Auth must really be on: without the token, /mcp answers 401 (and the suite, which sends none, would fail).
  code="$(node -e 'fetch(process.argv[1],{method:"POST",headers:{"content-type":"application/json"},body:"{}"}).then((r)=>console.log(r.status),()=>console.log(0))' "$TARGET")"
  if [[ "$code" != 401 ]]; then
    log "error: without a token $TARGET answered $code, not 401: is auth configured in $CONFIG?"
    show_log
    exit 1
  fi
  PROXY_PORT="$(free_port)"
  log "with a token: the suite goes through scripts/conformance-proxy.ts on 127.0.0.1:$PROXY_PORT"
  if command -v setsid >/dev/null 2>&1; then
    setsid npx tsx scripts/conformance-proxy.ts "$PROXY_PORT" "http://127.0.0.1:$PORT" </dev/null >>"$LOG" 2>&1 &
  else
    npx tsx scripts/conformance-proxy.ts "$PROXY_PORT" "http://127.0.0.1:$PORT" </dev/null >>"$LOG" 2>&1 &
  fi
  PROXY_PID=$!
  started=$SECONDS
  until port_answers "$PROXY_PORT"; do
    if ! kill -0 "$PROXY_PID" 2>/dev/null || ((SECONDS - started >= STARTUP_TIMEOUT_S)); then
      log "error: the token proxy did not listen on 127.0.0.1:$PROXY_PORT"
      show_log
      exit 1
    fi
    sleep 0.25
  done
  TARGET="http://127.0.0.1:$PROXY_PORT/mcp"
fi

set +e
bash "$ROOT/scripts/conformance.sh" "$TARGET"
status=$?
set -e
if ((status != 0)); then
  show_log
fi
exit "$status"
