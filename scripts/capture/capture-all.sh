#!/usr/bin/env bash
# Runs every client driver against the fake broker once per version cap, logging raw request
# frames to $OUT/<client>.jsonl. API_CAPS="19=0 20=0" additionally caps single APIs;
# CLIENTS="platformatic" runs only some drivers (kcat kafkajs confluent kafka-python platformatic).
# Then: bun scripts/capture/select-golden.ts $OUT
set -u
cd "$(dirname "$0")/../.."
OUT="${1:-/tmp/kafka-capture}"
CAPS="${CAPS:-0 1 2 3 4 5 6 7 8 9 10 11 12}"
CLIENTS="${CLIENTS:-kcat kafkajs confluent kafka-python platformatic}"
PY=/usr/bin/python3
BUN=./node_modules/.bin/bun
mkdir -p "$OUT"
want() { [[ " $CLIENTS " == *" $1 "* ]]; }
run() { # client port cap command...
  local client="$1" port="$2" cap="$3"; shift 3
  local extra=()
  for kv in ${API_CAPS:-}; do extra+=(--cap-api "$kv"); done
  $BUN scripts/capture/fake-broker.ts --port "$port" --log "$OUT/$client.jsonl" --label "$client" --cap "$cap" "${extra[@]}" >>"$OUT/$client.broker.log" 2>&1 &
  local pid=$!
  for _ in $(seq 1 100); do (echo >"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
  "$@" >>"$OUT/$client.client.log" 2>&1
  kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
}
# @platformatic/kafka: high-level flows, and its per-version API functions for requests no flow
# sends (label platformatic-api). It needs Bun here: Node 20 lacks Promise.withResolvers.
platformatic() { # cap
  run platformatic 19205 "$1" $BUN scripts/capture/drive-platformatic.mjs 127.0.0.1:19205 flows &
  run platformatic-api 19206 "$1" $BUN scripts/capture/drive-platformatic.mjs 127.0.0.1:19206 direct
  wait
}
pass() { # cap
  local cap="$1"
  want kcat && run kcat 19201 "$cap" bash scripts/capture/drive-kcat.sh 127.0.0.1:19201 &
  want kafkajs && run kafkajs 19202 "$cap" node scripts/capture/drive-kafkajs.mjs 127.0.0.1:19202
  wait
  want confluent && run confluent 19203 "$cap" "$PY" scripts/capture/drive-confluent.py 127.0.0.1:19203 &
  want kafka-python && run kafka-python 19204 "$cap" "$PY" scripts/capture/drive-kafka-python.py 127.0.0.1:19204
  wait
  # platformatic implements no ApiVersions v0, so it cannot talk to a cap-0 broker.
  if want platformatic && [ "$cap" -ge 1 ]; then platformatic "$cap"; fi
}
for cap in $CAPS; do
  pass "$cap"
  echo "cap $cap done"
done
# v0 of the admin and group APIs, and of IncrementalAlterConfigs and DescribeCluster: a cap-0
# broker is too old for the admin clients to get that far, so cap those APIs alone.
API_CAPS="${API_CAPS:-} 15=0 16=0 19=0 20=0 21=0 32=0 37=0 42=0 44=0 60=0" pass 12
echo "v0 pass done"
