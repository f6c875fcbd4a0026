#!/bin/bash
# SQLite across workers, by hand (docs/performance/workers.md, "Feed delivery across workers on SQLite"): the built
# server (npm run build) at WORKERS=$W (default 2) on a fresh migrated file, wrk creates for 10 s on 16 connections.
#   bench/workers-sqlite-feed.sh lag   creates paced at $RATE a second (default 600), 4 change streams: the delivery lag
#                                 per event (bench/workers-feed-lag.cjs)
#   bench/workers-sqlite-feed.sh cpu   creates in a closed loop: the supervisor's CPU seconds over the run, per create
# A connection of this script's stays open on the file while the workers start (their start-up order is the single
# writer's work: two workers opening a file no process holds meet `database is locked`).
set -eu
cd "$(dirname "$0")/.."
MODE=${1:-lag}; W=${W:-2}; RATE=${RATE:-600}; PORT=${PORT:-18942}
NODE=node_modules/.bin/node
D=$(mktemp -d); T=$(printf 'b%.0s' {1..32})
$NODE -e "const D=require('better-sqlite3');const {migrate,loadMigrations}=require('./dist/db/migrate.sqlite');const db=new D('$D/p.db');db.pragma('journal_mode = WAL');migrate(db,loadMigrations());db.close();"
$NODE -e "const D=require('better-sqlite3');const db=new D('$D/p.db');db.prepare('select 1').get();setTimeout(()=>{},40000)" & HOLDER=$!
sleep 0.3
PORT=$PORT HOST=127.0.0.1 AUTH_TOKENS=$T RATE_LIMIT_PER_MINUTE=0 LOAD_SHED_LAG_MS=0 METRICS_PORT=0 WORKERS=$W LOG_LEVEL=warn DATABASE_URL=file:$D/p.db $NODE dist/server.js > "$D/out.log" 2>&1 & SUP=$!
sleep 3
cpu() { awk '{print $14+$15}' "/proc/$1/stat"; }
WRK="wrk -t1 -c16 -d10s -s bench/workers.wrk.lua http://127.0.0.1:$PORT/plants"
if [ "$MODE" = lag ]; then
  $NODE bench/workers-feed-lag.cjs "http://127.0.0.1:$PORT" "$T" 4 12 & LAG=$!
  sleep 1
  WRK_LOAD=creates WRK_TOKEN=$T WRK_ID_BASE=1 WRK_RATE=$RATE $WRK > "$D/wrk.txt" 2>&1
  wait $LAG
else
  before=$(cpu $SUP)
  WRK_LOAD=creates WRK_TOKEN=$T WRK_ID_BASE=1 $WRK > "$D/wrk.txt" 2>&1
  after=$(cpu $SUP)
  creates=$($NODE -e "const D=require('better-sqlite3');console.log(new D('$D/p.db').prepare('select count(*) c from plants').get().c)")
  echo "{\"creates\":$creates,\"supervisorCpuS\":$(echo "($after-$before)/$(getconf CLK_TCK)" | bc -l | cut -c1-5)}"
fi
grep -E "Requests/sec" "$D/wrk.txt"
kill $SUP; wait $SUP || true; kill $HOLDER 2>/dev/null || true
rm -rf "$D"
