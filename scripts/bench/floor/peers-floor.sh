#!/usr/bin/env bash
# The floor (scripts/bench/floor: express + BullMQ + undici with none of the gateway's features) as
# the third column of the peer harness, JSON and streamed chat (FLOOR_SCENARIOS): its own redis-server, one web and one worker
# process, CPU per request counted over all three, as ours.sh counts the gateway's.
#   GATEWAY_DIR=<built checkout> bash <harness copy>/peers-floor.sh   (copied beside run.sh; its knobs pass through)
# Started by `npm run bench:peers` unless PEERS_FLOOR=0.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
: "${GATEWAY_DIR:?set GATEWAY_DIR to a built checkout}"
FLOOR_REDIS_PORT=${FLOOR_REDIS_PORT:-18479} FLOOR_PORT=${FLOOR_PORT:-18890}
work=$(mktemp -d)
redis-server --port "$FLOOR_REDIS_PORT" --save '' --appendonly no >"$work/redis.log" 2>&1 &
REDIS_PID=$!
trap 'kill $REDIS_PID 2>/dev/null || true; rm -rf "$work"' EXIT
cat >"$work/procs.sh" <<SH
#!/usr/bin/env bash
cd "$GATEWAY_DIR"
export PORT=$FLOOR_PORT REDIS_URL=redis://127.0.0.1:$FLOOR_REDIS_PORT FLOOR_UPSTREAM=\$STUB_URL FLOOR_UPSTREAM_MODEL=
node ${FLOOR_WEB_NODE_ARGS:-} dist/scripts/bench/floor/web.js & W=\$!
node ${FLOOR_WORKER_NODE_ARGS:-} dist/scripts/bench/floor/worker.js & K=\$!
trap 'kill \$W \$K; wait' TERM INT
wait
SH
export OUR_GATEWAY_URL="http://127.0.0.1:$FLOOR_PORT" OUR_GATEWAY_NAME=floor OUR_GATEWAY_HEADERS='{}'
export OUR_GATEWAY_CMD="bash $work/procs.sh" OUR_GATEWAY_READY="http://127.0.0.1:$FLOOR_PORT/healthz"
export OUR_EXTRA_PIDS="$REDIS_PID" SCENARIOS="${FLOOR_SCENARIOS:-chat stream}"
cd "$here"
bash run.sh "$@"
