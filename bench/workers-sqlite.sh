#!/usr/bin/env bash
# Creates on SQLite at WORKERS=1 and WORKERS=2 (docs/performance/workers.md, "SQLite across workers"): the built
# dist/server.js on a fresh file, wrk (bench/workers.wrk.lua, creates with new ids) for SECONDS with CONNECTIONS,
# then the request log counted per worker. Prints one line per run. Usage: bench/workers-sqlite.sh [rounds]
# DIST=<another build>/dist runs that build instead (an A/B); KEEP=1 keeps the files and logs.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
NODE="$ROOT/node_modules/.bin/node"
ROUNDS=${1:-1}; SECONDS_=${SECONDS_:-10}; CONNECTIONS=${CONNECTIONS:-32}
TOKEN=benchbenchbenchbenchbenchbenchbench1
WORK=$(mktemp -d /tmp/plants-sqlite-workers.XXXXXX)
[ -n "${KEEP:-}" ] || trap 'rm -rf "$WORK"' EXIT
run() {
  local workers=$1 round=$2 dir="$WORK/$1-$2"
  mkdir -p "$dir"
  AUTH_TOKENS=$TOKEN DATABASE_URL="file:$dir/plants.db" PORT=0 HOST=127.0.0.1 METRICS_PORT=0 LOG_LEVEL=info \
    WORKERS=$workers RATE_LIMIT_PER_MINUTE=0 "$NODE" "${DIST:-$ROOT/dist}/server.js" >"$dir/log" 2>&1 &
  local pid=$!
  local port=""
  for _ in $(seq 100); do
    port=$(grep -m1 '"msg":"listening"' "$dir/log" | sed -E 's/.*"port":([0-9]+).*/\1/' || true)
    [ -n "$port" ] && break; sleep 0.1
  done
  WRK_LOAD=creates WRK_TOKEN=$TOKEN WRK_ID_BASE=$((round * 100000)) WRK_THREADS=2 \
    /usr/bin/wrk -t2 -c"$CONNECTIONS" -d"${SECONDS_}s" --latency -s "$ROOT/bench/workers.wrk.lua" "http://127.0.0.1:$port" >"$dir/wrk" 2>&1
  kill -TERM "$pid"; wait "$pid" || true
  local json; json=$(grep WRK_JSON "$dir/wrk" | sed 's/^WRK_JSON //')
  local perWorker; perWorker=$(grep '"method":"POST"' "$dir/log" | grep -o '"worker":[0-9]*' | sort | uniq -c | awk '{printf "%s=%s ", $2, $1}' || true)
  local errors; errors=$(grep -c '"level":50\|"level":60' "$dir/log" || true)
  local posts; posts=$(grep -c '"method":"POST".*"status":20[01]' "$dir/log" || true)
  echo "WORKERS=$workers round=$round $json logged201=$posts perWorker: ${perWorker:-(one process)} errorLines=$errors"
}
for round in $(seq "$ROUNDS"); do
  run 1 "$round"; run 2 "$round"
done
