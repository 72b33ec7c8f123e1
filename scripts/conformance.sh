#!/usr/bin/env bash
# MCP conformance of Countersign: `npm run conformance` (and a step of `npm test`).
#  1. installs the official suite (@modelcontextprotocol/conformance) and the Node 22 it needs from the npm
#     registry, pinned exactly by conformance/runner/package-lock.json, into .cache/conformance (once; outside
#     the app's node_modules);
#  2. starts Countersign in conformance mode (COUNTERSIGN_CONFORMANCE=1: the suite's fixtures are served, backed
#     by the same task store) on a scratch embedded database and its own port;
#  3. runs the black-box scenarios of tests/conformance (the SEP's seven statements, transport rules) against it;
#  4. runs the official suite, `--requirements 2026-07-28` (which includes the tasks-* extension scenarios), with
#     conformance/expected-failures.yml as the baseline, through a proxy that adds the agent's bearer token.
# Reports go to $1 (default test-reports/); exits non-zero on any failure.
#
# Environment: CONFORMANCE_PORT (default 3227; the proxy uses the next port), CONFORMANCE_TIMEOUT_MS (per
# scenario, default 8000), COUNTERSIGN_CONFORMANCE_CACHE (default .cache/conformance).
set -uo pipefail
cd "$(dirname "$0")/.."

out="${1:-test-reports}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
port="${CONFORMANCE_PORT:-3227}"
proxy_port=$((port + 1))
cache="${COUNTERSIGN_CONFORMANCE_CACHE:-.cache/conformance}"
token="cs_demo-ops-bot-token-not-for-production-000002" # the seeded demo ops agent (published in README.md); the support bot may only issue refunds
log() { echo "[conformance] $*"; }

# --- 1. the pinned suite and Node 22 -------------------------------------------------------------------------
mkdir -p "$cache"
if ! cmp -s conformance/runner/package-lock.json "$cache/package-lock.json" || [ ! -x "$cache/node_modules/.bin/node" ]; then
  log "installing the pinned conformance suite and Node 22 into $cache"
  cp conformance/runner/package.json conformance/runner/package-lock.json "$cache/"
  if ! (cd "$cache" && npm ci --no-audit --no-fund --loglevel=error >/dev/null); then
    log "could not install the conformance suite (no registry access?)"
    exit 1
  fi
fi
node22="$cache/node_modules/.bin/node"
suite="$cache/node_modules/@modelcontextprotocol/conformance/dist/index.js"
log "suite $(node -p "require(require('path').resolve(process.argv[1], 'node_modules/@modelcontextprotocol/conformance/package.json')).version" "$cache") on Node $("$node22" --version)"

# --- 2. a conformance-mode server on a scratch database --------------------------------------------------------
server_log="$out/conformance-server.log"
. scripts/scratch-server.sh
start_scratch_server "$port" "$server_log" COUNTERSIGN_CONFORMANCE=1 COUNTERSIGN_POLL_INTERVAL_MS=500 \
  COUNTERSIGN_MAX_PENDING_PER_AGENT=100000 COUNTERSIGN_SUBMISSIONS_PER_MINUTE=100000
proxy=""
cleanup() {
  [ -n "$proxy" ] && kill -TERM "$proxy" 2>/dev/null
  stop_scratch_server
}
trap cleanup EXIT
if ! wait_scratch_server "$port"; then
  log "the conformance-mode server did not start; its log:"
  tail -50 "$server_log"
  exit 1
fi
db_port=$(node -p "JSON.parse(require('fs').readFileSync('$scratch_data/owner.json','utf8')).port")
log "server on http://127.0.0.1:$port (conformance mode, database on 127.0.0.1:$db_port)"

status=0

# --- 3. black-box scenarios ------------------------------------------------------------------------------------
log "black-box scenarios (tests/conformance)"
# The reviewer's side reads the server's sealed records, so it uses the server's data folder (and so its key).
COUNTERSIGN_BASE_URL="http://127.0.0.1:$port" DB_POOL_MAX=4 COUNTERSIGN_DATA_DIR="$scratch_data" \
  DATABASE_URL="postgres://postgres:postgres@127.0.0.1:$db_port/postgres?sslmode=disable" \
  npx vitest run --config tests/conformance/vitest.config.ts --reporter=default --reporter=json \
  --outputFile.json="$out/vitest-conformance.json" || status=1

# --- 4. the official suite -------------------------------------------------------------------------------------
node scripts/conformance-proxy.mjs "$proxy_port" "http://127.0.0.1:$port" "$token" >"$out/conformance-proxy.log" 2>&1 &
proxy=$!
for _ in $(seq 1 50); do curl -s -o /dev/null "http://127.0.0.1:$proxy_port/" 2>/dev/null && break; sleep 0.1; done
log "official suite: --requirements 2026-07-28 (with the tasks-* extension scenarios)"
started=$(date +%s)
rm -rf "$out/conformance-suite"
"$node22" "$suite" server --url "http://127.0.0.1:$proxy_port/mcp" --requirements 2026-07-28 \
  --expected-failures conformance/expected-failures.yml --timeout "${CONFORMANCE_TIMEOUT_MS:-8000}" \
  -o "$out/conformance-suite" >"$out/conformance-suite.log" 2>&1
suite_rc=$?
sed -n '/=== SUMMARY ===/,$p' "$out/conformance-suite.log"
log "official suite finished in $(( $(date +%s) - started )) s with exit code $suite_rc"
# One JSON report in the shape scripts/test-summary.mjs adds up: one "test" per scenario.
node -e '
const fs = require("fs");
const [log, file, rc] = process.argv.slice(1);
const text = fs.readFileSync(log, "utf8");
const summary = text.slice(text.indexOf("=== SUMMARY ==="));
const passed = (summary.match(/^✓ /gm) || []).length;
let failed = (summary.match(/^✗ /gm) || []).length;
if (rc !== "0" && failed === 0) failed = 1; // a stale baseline entry or a crash fails the run too
fs.writeFileSync(file, JSON.stringify({ numPassedTests: passed, numFailedTests: failed, numPendingTests: 0, numTodoTests: 0, numFailedTestSuites: 0 }));
' "$out/conformance-suite.log" "$out/conformance-suite.json" "$suite_rc"
[ "$suite_rc" = 0 ] || status=1

exit $status
