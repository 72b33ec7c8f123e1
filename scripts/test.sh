#!/usr/bin/env bash
# The whole test suite: `npm test`.
#  1. unit and integration tests (Vitest) on the embedded database;
#  2. the same again on PostgreSQL when TEST_DATABASE_URL names one (CI does);
#  3. end-to-end tests (Playwright, Debian's Chromium) against a freshly built Countersign on a scratch embedded
#     database, then single sign-on against a real OpenID Connect provider (playwright.sso.config.ts).
# Prints one closing line: "tests: N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."

out=test-reports
rm -rf "$out" && mkdir -p "$out"

browser="${CHROMIUM_PATH:-/usr/bin/chromium}"
if [ ! -x "$browser" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "[test] installing Debian's chromium for the browser tests..."
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) >/dev/null || true
  fi
  if [ ! -x "$browser" ]; then
    echo "[test] no browser: install Debian's chromium (sudo apt-get install chromium) or set CHROMIUM_PATH to a Chromium binary."
    exit 1
  fi
fi
export CHROMIUM_PATH="$browser"

status=0
echo "[test] unit and integration tests on the embedded database"
env -u DATABASE_URL npx vitest run --reporter=default --reporter=json --outputFile.json="$out/vitest-embedded.json" || status=1

if [ -n "${TEST_DATABASE_URL:-}" ]; then
  echo "[test] the same tests on PostgreSQL (TEST_DATABASE_URL)"
  DATABASE_URL="$TEST_DATABASE_URL" npx vitest run --reporter=default --reporter=json --outputFile.json="$out/vitest-postgresql.json" || status=1
fi

echo "[test] end-to-end tests in Chromium"
port="${E2E_PORT:-3217}"
log="$out/server.log"
. scripts/scratch-server.sh
# The Slack signing secret lets the linking test sign its slash command as Slack does (a test value).
export E2E_SLACK_SIGNING_SECRET="${E2E_SLACK_SIGNING_SECRET:-e2e-slack-signing-secret}"
# The per-agent limits (10 submissions a minute, 20 open) are proved by lib/mcp/hardening.test.ts; here the specs
# share the demo agents, and how many of their calls fall within one minute depends on the machine's speed, so the
# browser suite's server raises them out of the way rather than failing whichever spec comes eleventh.
start_scratch_server "$port" "$log" COUNTERSIGN_SLACK_SIGNING_SECRET="$E2E_SLACK_SIGNING_SECRET" \
  COUNTERSIGN_SUBMISSIONS_PER_MINUTE=10000 COUNTERSIGN_MAX_PENDING_PER_AGENT=10000
trap stop_scratch_server EXIT
if wait_scratch_server "$port"; then
  BASE_URL="http://127.0.0.1:$port" COUNTERSIGN_DATA_DIR="$scratch_data" PLAYWRIGHT_JSON_OUTPUT_NAME="$out/playwright.json" \
    npx playwright test --reporter=list,json || status=1
else
  echo "[test] the server did not start; its log:"
  tail -50 "$log"
  status=1
fi

# ---- single sign-on through an OpenID Connect provider (e2e-sso/) -----------------------------------------------
# A Countersign from the build above (never rebuilt) with one provider configured and password sign-in off, on a
# scratch embedded database of its own (port 3351); the spec runs the provider itself (oidc-provider, port 3352) and
# sets its accounts' claims. The suite's global setup starts the server and its teardown stops it.
echo "[test] single sign-on through an OpenID Connect provider (playwright.sso.config.ts)"
stop_scratch_server
scratch_pid=""
PLAYWRIGHT_JSON_OUTPUT_NAME="$out/playwright-sso.json" SSO_LOG_DIR="$out/sso" \
  npx playwright test -c playwright.sso.config.ts --reporter=list,json || status=1

# ---- many replicas on one PostgreSQL (e2e-replicas/; needs TEST_DATABASE_URL) ---------------------------------
# Three `next start` servers from the build above on a fresh cs_repl_* database on that server, a fourth killed
# mid-burst; the suite's global setup creates the database and its teardown stops the servers and drops it.
if [ -n "${TEST_DATABASE_URL:-}" ]; then
  echo "[test] many replicas on one PostgreSQL (playwright.replicas.config.ts)"
  stop_scratch_server
  scratch_pid=""
  PLAYWRIGHT_JSON_OUTPUT_NAME="$out/playwright-replicas.json" REPLICAS_LOG_DIR="$out/replicas" \
    npx playwright test -c playwright.replicas.config.ts --reporter=list,json || status=1
fi

# ---- MCP conformance (lib/mcp; see docs/conformance.md) ---------------------------------------------------------
# Its own conformance-mode server (scratch database, port 3227/3228, reusing the build above): the black-box
# scenarios of tests/conformance, then the official suite pinned in conformance/runner. Reports land in $out.
echo "[test] MCP conformance: black-box scenarios and the official suite (scripts/conformance.sh)"
bash scripts/conformance.sh "$out" || status=1
# ---- end MCP conformance ----------------------------------------------------------------------------------------

node scripts/test-summary.mjs "$out" || status=1
exit $status
