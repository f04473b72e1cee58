#!/usr/bin/env bash
# Runs Burrow (Debian's burrow 1.2, the common consumer-lag monitor) against a running broker and
# prints one group's lag as Burrow evaluates it. Burrow needs ZooKeeper for itself: a private one
# runs on loopback for the duration, with its data in a temporary directory removed at the end.
#
#   apt-get install burrow zookeeper
#   scripts/burrow-lag.sh 127.0.0.1:9092 billing          # bootstrap address, consumer group
#
# Prints Burrow's clusters, topics and groups, then the group's status (OK/WARN/ERR...), total
# lag and each partition's lag. Exits 1 when Burrow does not report the group within
# BURROW_WAIT seconds (default 60; Burrow refreshes offsets every 10 s here).
# Burrow 1.2 asks for offsets with ListOffsets v0, which the broker must serve (docs/kafka.md).
set -euo pipefail

bootstrap=${1:?usage: $0 HOST:PORT GROUP}
group=${2:?usage: $0 HOST:PORT GROUP}
wait_s=${BURROW_WAIT:-60}
BURROW=$(command -v Burrow || command -v burrow || true)
ZK_JAR=/usr/share/java/zookeeper.jar
[ -n "$BURROW" ] || { echo "Burrow is not installed (apt-get install burrow)" >&2; exit 2; }
[ -f "$ZK_JAR" ] || { echo "ZooKeeper is not installed (apt-get install zookeeper)" >&2; exit 2; }

dir=$(mktemp -d /tmp/burrow-lag.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
zk_port=$(free_port)
http_port=$(free_port)

mkdir -p "$dir/zk" "$dir/conf"
cat >"$dir/zoo.cfg" <<EOF
tickTime=2000
dataDir=$dir/zk
clientPort=$zk_port
clientPortAddress=127.0.0.1
admin.enableServer=false
4lw.commands.whitelist=srvr
EOF
# The jar's manifest names its dependencies (as zkServer.sh runs it).
java -Dzookeeper.root.logger=${ZK_LOG_LEVEL:-WARN},CONSOLE -cp "/etc/zookeeper/conf:$ZK_JAR:/usr/share/java/slf4j-simple.jar" \
  org.apache.zookeeper.server.ZooKeeperServerMain "$dir/zoo.cfg" >"$dir/zk.log" 2>&1 &
pids+=($!)
zk_ok() { # its mode once it serves ("ruok" says imok before the database has loaded)
  exec 3<>"/dev/tcp/127.0.0.1/$zk_port" || return 1
  echo srvr >&3
  local answer
  answer=$(timeout 2 cat <&3 || true)
  exec 3>&-
  [[ "$answer" == *"Mode: "* ]]
}
for _ in $(seq 1 150); do
  zk_ok 2>/dev/null && break
  sleep 0.2
done
zk_ok 2>/dev/null || { echo "ZooKeeper did not start: $(tail -5 "$dir/zk.log")" >&2; exit 1; }

# kafka-version 2.0.0: Burrow reads __consumer_offsets and asks partition leaders for offsets.
cat >"$dir/conf/burrow.toml" <<EOF
[general]
pidfile="$dir/burrow.pid"

[logging]
level="info"

[zookeeper]
servers=["127.0.0.1:$zk_port"]
timeout=6
root-path="/burrow"

[client-profile.broker]
client-id="burrow-lag"
kafka-version="2.0.0"

[cluster.broker]
class-name="kafka"
servers=["$bootstrap"]
client-profile="broker"
topic-refresh=10
offset-refresh=10

[consumer.broker]
class-name="kafka"
cluster="broker"
servers=["$bootstrap"]
client-profile="broker"
start-latest=false

[httpserver.default]
address="127.0.0.1:$http_port"

[storage.default]
class-name="inmemory"
workers=4
intervals=10
expire-group=604800
min-distance=1
EOF
"$BURROW" --config-dir "$dir/conf" >"$dir/burrow.log" 2>&1 &
pids+=($!)

api="http://127.0.0.1:$http_port/v3/kafka"
deadline=$((SECONDS + wait_s))
lag=""
while [ $SECONDS -lt $deadline ]; do
  sleep 2
  lag=$(curl -sf "$api/broker/consumer/$group/lag" || true)
  # Burrow answers 404 until it has seen the group, and a lag with no partitions until it has
  # offsets for them.
  if [ -n "$lag" ] && python3 -c 'import json,sys; s=json.load(sys.stdin)["status"]; sys.exit(0 if s.get("partitions") else 1)' <<<"$lag" 2>/dev/null; then
    break
  fi
  lag=""
done

field() { # URL KEY: one field of a Burrow answer, or "(none)"
  curl -sf "$1" | python3 -c "import json,sys; print(json.load(sys.stdin)['$2'])" 2>/dev/null ||
    echo "(none)"
}
echo "clusters: $(field "$api" clusters)"
echo "topics:   $(field "$api/broker/topic" topics)"
echo "groups:   $(field "$api/broker/consumer" consumers)"
if [ -z "$lag" ]; then
  echo "Burrow reported no lag for group $group within $wait_s s; its log ($dir/burrow.log):" >&2
  tail -20 "$dir/burrow.log" >&2; [ -z "${ZK_LOG_LEVEL:-}" ] || cat "$dir/zk.log" >&2
  exit 1
fi
LAG=$lag python3 - "$group" <<'EOF'
import json, os, sys
s = json.loads(os.environ["LAG"])["status"]
print(f"group {sys.argv[1]}: status {s['status']}, total lag {s['totallag']}")
for p in sorted(s["partitions"], key=lambda p: (p["topic"], p["partition"])):
    end = p.get("end") or {}
    print(f"  {p['topic']}-{p['partition']}: lag {p['current_lag']} (committed offset {end.get('offset')}) {p['status']}")
EOF
