#!/usr/bin/env bash
# A throwaway multi-node Apache Kafka cluster (KRaft; every node is broker and controller) on
# 127.0.0.1, for fault tests that need replication: topics with replication factor 3 and
# min.insync.replicas 2 keep serving while one node is down. Each node is started through
# scripts/kafka-broker.sh (same jars, same JVM settings) from its own folder DIR/node<I>.
#
#   scripts/kafka-cluster.sh start DIR [NODES]     # returns once every node serves clients
#   scripts/kafka-cluster.sh bootstrap DIR         # prints 127.0.0.1:P1,127.0.0.1:P2,…
#   scripts/kafka-cluster.sh kill-node DIR I       # SIGKILL node I (1-based)
#   scripts/kafka-cluster.sh stop-node DIR I       # controlled shutdown of node I (SIGTERM)
#   scripts/kafka-cluster.sh start-node DIR I      # restart node I on its ports and data
#   scripts/kafka-cluster.sh stop DIR              # controlled shutdown of every node
#   scripts/kafka-cluster.sh kill DIR              # SIGKILL every node
#
# NODES defaults to 3. The cluster's ports, id and owner are kept in DIR/cluster.env so that
# later commands (from other processes) restart a node exactly as it was. Node I listens for
# clients on BASE+2(I-1) and for the controller quorum on BASE+2(I-1)+1.
#
# Settings on top of kafka-broker.sh's: replication factor 3 for new topics, the consumer
# offsets and the transaction state log; min.insync.replicas 2 (also for the transaction state
# log). KAFKA_OWNER_PID (optional) is handed to every node: its watchdog kills the node once
# that process is gone. Other kafka-broker.sh knobs (KAFKA_HEAP_OPTS, KAFKA_START_TIMEOUT…)
# pass through.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
broker="$here/kafka-broker.sh"

die() {
  echo "kafka-cluster.sh: $*" >&2
  exit 1
}

usage() {
  sed -n '7,13p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

port_open() {
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# A base port with 2*NODES free ports above it, below the kernel's ephemeral range
# (net.ipv4.ip_local_port_range): a port in that range can be handed to any outgoing connection,
# for example another node's connection to the quorum, in the moments before a node binds it, and
# the same ports are bound again when a node is restarted mid-test. A process that binds a fixed
# port may still take one first; cmd_start then starts again on new ports.
pick_base_port() {
  local nodes="$1" base ok p low=32768 span
  if [[ -r /proc/sys/net/ipv4/ip_local_port_range ]]; then
    read -r low _ </proc/sys/net/ipv4/ip_local_port_range || low=32768
  fi
  # Ports 10000 up to the ephemeral range; when that range starts lower (a tuned host), fall
  # back to the 10000..32767 window and rely on the retry.
  ((low > 10000 + 64 * nodes)) || low=32768
  span=$(((low - 10000 - 2 * nodes) / 16))
  for _ in $(seq 1 50); do
    base=$((10000 + (RANDOM % span) * 16))
    ok=1
    for ((p = base; p < base + 2 * nodes; p++)); do
      if port_open "$p"; then
        ok=0
        break
      fi
    done
    if ((ok)); then
      echo "$base"
      return 0
    fi
  done
  die "found no $((2 * nodes)) free consecutive ports on 127.0.0.1 below $low"
}

load_env() {
  local dir="$1"
  [[ -f "$dir/cluster.env" ]] || die "no cluster in $dir (cluster.env is missing)"
  # shellcheck disable=SC1091
  source "$dir/cluster.env"
}

client_port() { echo $((BASE_PORT + 2 * ($1 - 1))); }
controller_port() { echo $((BASE_PORT + 2 * ($1 - 1) + 1)); }

node_properties() {
  local node="$1" voters="" i
  for ((i = 1; i <= NODES; i++)); do
    voters+="${voters:+,}$i@127.0.0.1:$(controller_port "$i")"
  done
  local replication=$((NODES < 3 ? NODES : 3))
  local min_isr=$((replication > 1 ? 2 : 1))
  cat <<PROPS
node.id=$node
controller.quorum.voters=$voters
default.replication.factor=$replication
min.insync.replicas=$min_isr
offsets.topic.replication.factor=$replication
transaction.state.log.replication.factor=$replication
transaction.state.log.min.isr=$min_isr
PROPS
}

launch_node() {
  local dir="$1" node="$2"
  local extra
  extra="$(node_properties "$node")"
  if [[ -n "${KAFKA_EXTRA_PROPERTIES:-}" ]]; then extra+=$'\n'"$KAFKA_EXTRA_PROPERTIES"; fi
  KAFKA_CLUSTER_ID="$CLUSTER_ID" KAFKA_START_WAIT=0 KAFKA_EXTRA_PROPERTIES="$extra" \
    KAFKA_OWNER_PID="${OWNER_PID:-}" \
    "$broker" start "$dir/node$node" "$(client_port "$node")" "$(controller_port "$node")"
}

wait_node() {
  local dir="$1" node="$2"
  "$broker" wait "$dir/node$node" "$(client_port "$node")"
}

cmd_start() {
  [[ $# -ge 1 ]] || usage
  local dir="$1" nodes="${2:-3}" i
  mkdir -p "$dir"
  dir="$(cd "$dir" && pwd)"
  [[ ! -f "$dir/cluster.env" ]] || die "$dir already holds a cluster; use start-node or a new folder"
  local cluster_id="-"
  while [[ "$cluster_id" == -* ]]; do
    cluster_id="$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n')"
  done
  local attempt ok launched
  for attempt in 1 2 3; do
    cat >"$dir/cluster.env" <<ENV
NODES=$nodes
BASE_PORT=$(pick_base_port "$nodes")
CLUSTER_ID=$cluster_id
OWNER_PID=${KAFKA_OWNER_PID:-}
ENV
    load_env "$dir"
    ok=1 launched=1
    for ((i = 1; i <= NODES; i++)); do launch_node "$dir" "$i" || ok=0 launched=0; done
    if ((ok)); then
      for ((i = 1; i <= NODES; i++)); do wait_node "$dir" "$i" || ok=0; done
    fi
    if ((ok)); then
      echo "kafka cluster of $NODES nodes on $(bootstrap_list), dir $dir"
      return 0
    fi
    # Only a lost race for a port is worth another try (a launch refused because a port was
    # taken, or a node that failed to bind); anything else is reported as it is.
    if ((launched)) && ! grep -qs 'Address already in use' "$dir"/node*/server.log; then
      die "the cluster did not start (logs in $dir/node*/server.log)"
    fi
    echo "kafka-cluster.sh: a port was taken before a node bound it; starting again on new ports (attempt $attempt of 3)" >&2
    for ((i = 1; i <= NODES; i++)); do "$broker" kill "$dir/node$i" >/dev/null 2>&1 || true; done
    for ((i = 1; i <= NODES; i++)); do
      if [[ -d "$dir/node$i" ]]; then mv "$dir/node$i" "$dir/node$i.failed-$attempt"; fi
    done
  done
  die "the cluster did not start after 3 attempts (logs in $dir/node*.failed-*)"
}

bootstrap_list() {
  local list="" i
  for ((i = 1; i <= NODES; i++)); do list+="${list:+,}127.0.0.1:$(client_port "$i")"; done
  echo "$list"
}

check_node() {
  [[ "$1" =~ ^[0-9]+$ ]] && (($1 >= 1 && $1 <= NODES)) || die "node must be 1..$NODES, not '$1'"
}

[[ $# -ge 2 ]] || usage
command="$1"
shift
case "$command" in
  start) cmd_start "$@" ;;
  bootstrap)
    load_env "$1"
    bootstrap_list
    ;;
  kill-node | stop-node | start-node)
    [[ $# -eq 2 ]] || usage
    dir="$(cd "$1" && pwd)"
    load_env "$dir"
    check_node "$2"
    case "$command" in
      kill-node) "$broker" kill "$dir/node$2" ;;
      stop-node) "$broker" stop "$dir/node$2" ;;
      start-node)
        launch_node "$dir" "$2"
        wait_node "$dir" "$2"
        ;;
    esac
    ;;
  stop | kill)
    dir="$(cd "$1" && pwd)"
    load_env "$dir"
    for ((i = 1; i <= NODES; i++)); do
      if [[ -d "$dir/node$i" ]]; then
        if [[ "$command" == stop ]]; then "$broker" stop "$dir/node$i" || true; else "$broker" kill "$dir/node$i" || true; fi
      fi
    done
    ;;
  *) usage ;;
esac
