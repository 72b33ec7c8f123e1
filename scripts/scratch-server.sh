# Sourced by scripts/test.sh and scripts/conformance.sh: a Countersign on a scratch embedded database of its own.
#   start_scratch_server PORT LOG [VAR=value ...]   starts it in the background (sets scratch_pid, scratch_data)
#   wait_scratch_server PORT                        0 once /login answers; 1 if it died or 10 minutes passed
#   stop_scratch_server                             stops it and removes its data
start_scratch_server() {
  local port=$1 log=$2
  shift 2
  scratch_data=$(mktemp -d)
  env -u DATABASE_URL COUNTERSIGN_DATA_DIR="$scratch_data" COUNTERSIGN_SANDBOX_DIR="$scratch_data/sandbox" PORT="$port" \
    COUNTERSIGN_SWEEP_MS=500 COUNTERSIGN_DEMO_STEADY_CLOCK=1 "$@" node node_modules/tsx/dist/cli.mjs scripts/start.ts >"$log" 2>&1 &
  scratch_pid=$!
}

wait_scratch_server() {
  local port=$1
  for _ in $(seq 1 600); do
    curl -fsS -o /dev/null "http://127.0.0.1:$port/login" 2>/dev/null && return 0
    kill -0 "$scratch_pid" 2>/dev/null || return 1
    sleep 1
  done
  return 1
}

stop_scratch_server() {
  [ -n "${scratch_pid:-}" ] || return 0
  kill -TERM "$scratch_pid" 2>/dev/null
  for _ in $(seq 1 50); do kill -0 "$scratch_pid" 2>/dev/null || break; sleep 0.2; done
  kill -KILL "$scratch_pid" 2>/dev/null
  rm -rf "$scratch_data"
}
