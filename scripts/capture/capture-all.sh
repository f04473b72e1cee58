#!/usr/bin/env bash
# Runs every client driver against the fake broker once per version cap, logging raw request
# frames to $OUT/<client>.jsonl. API_CAPS="19=0 20=0" additionally caps single APIs. Then: bun scripts/capture/select-golden.ts $OUT
set -u
cd "$(dirname "$0")/../.."
OUT="${1:-/tmp/kafka-capture}"
CAPS="${CAPS:-0 1 2 3 4 5 6 7 8 9 10 11 12}"
PY=/usr/bin/python3
mkdir -p "$OUT"
run() { # client port cap command...
  local client="$1" port="$2" cap="$3"; shift 3
  local extra=()
  for kv in ${API_CAPS:-}; do extra+=(--cap-api "$kv"); done
  ./node_modules/.bin/bun scripts/capture/fake-broker.ts --port "$port" --log "$OUT/$client.jsonl" --label "$client" --cap "$cap" "${extra[@]}" >>"$OUT/$client.broker.log" 2>&1 &
  local pid=$!
  for _ in $(seq 1 100); do (echo >"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
  "$@" >>"$OUT/$client.client.log" 2>&1
  kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
}
for cap in $CAPS; do
  run kcat 19201 "$cap" bash scripts/capture/drive-kcat.sh 127.0.0.1:19201 &
  run kafkajs 19202 "$cap" node scripts/capture/drive-kafkajs.mjs 127.0.0.1:19202
  wait
  run confluent 19203 "$cap" "$PY" scripts/capture/drive-confluent.py 127.0.0.1:19203 &
  run kafka-python 19204 "$cap" "$PY" scripts/capture/drive-kafka-python.py 127.0.0.1:19204
  wait
  echo "cap $cap done"
done
