#!/usr/bin/env bash
# A throwaway single-node Apache Kafka (KRaft: one process is both broker and controller) on
# 127.0.0.1 for tests and local runs. The jars come from scripts/setup.sh (.deps/kafka/libs).
#
#   scripts/kafka-broker.sh start DIR PORT [CONTROLLER_PORT]   # returns once clients can connect
#   scripts/kafka-broker.sh stop DIR                           # graceful (SIGTERM, then SIGKILL)
#   scripts/kafka-broker.sh kill DIR                           # immediate SIGKILL (test teardown)
#   scripts/kafka-broker.sh wait DIR PORT                      # until a started broker serves clients
#   scripts/kafka-broker.sh run-class CLASS [ARGS...]          # a Kafka tool on the same classpath,
#                                                              # e.g. kafka.tools.ConsoleProducer
#
# DIR holds everything of this broker: server.properties, log4j.properties, data/ (log dirs and
# the KRaft metadata log), server.log (the broker's log), jvm.out (JVM stdout/stderr),
# broker.pid and watchdog.pid. Clients connect to 127.0.0.1:PORT (PLAINTEXT); the controller
# listens on CONTROLLER_PORT (default PORT+1).
#
# Settings are tuned for fast tests, not durability: replication factor 1 everywhere (including
# __consumer_offsets and __transaction_state), no initial rebalance delay, auto topic creation
# off (tests create topics explicitly, as production does), few internal partitions.
#
# Environment knobs (all optional):
#   KAFKA_LIBS            jar folder (default: <repo>/.deps/kafka/libs)
#   KAFKA_HEAP_OPTS       JVM heap flags (default: -Xmx512m -Xms64m)
#   KAFKA_JVM_OPTS        further JVM flags (default: C1-only JIT and serial GC; they start the
#                         broker faster and use less CPU on a small machine)
#   KAFKA_EXTRA_PROPERTIES  extra server.properties lines appended verbatim (later lines win)
#   KAFKA_START_TIMEOUT   seconds to wait for the broker to accept clients (default: 90)
#   KAFKA_STOP_TIMEOUT    seconds `stop` waits after SIGTERM before SIGKILL (default: 20)
#   KAFKA_OWNER_PID       if set, a watchdog SIGKILLs the broker as soon as this process is gone
#                         (a test binary that crashed or was killed by ctest leaves no broker)
#   KAFKA_OWNER_CLEANUP   with KAFKA_OWNER_PID: 1 = the watchdog also deletes DIR
#   KAFKA_CLUSTER_ID      cluster id to format a new DIR with (default: a random one); the nodes
#                         of one cluster share it (scripts/kafka-cluster.sh)
#   KAFKA_START_WAIT      0 = `start` returns once the JVM is launched, without waiting for
#                         clients (a node of a cluster cannot finish starting before a quorum of
#                         its peers runs; scripts/kafka-cluster.sh then calls `wait`). Default 1.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
libs="${KAFKA_LIBS:-$repo_root/.deps/kafka/libs}"
heap_opts="${KAFKA_HEAP_OPTS:--Xmx512m -Xms64m}"
jvm_opts="${KAFKA_JVM_OPTS:--XX:TieredStopAtLevel=1 -XX:+UseSerialGC -XX:-UsePerfData}"

die() {
  echo "kafka-broker.sh: $*" >&2
  exit 1
}

usage() {
  sed -n '5,10p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

require_runtime() {
  command -v java >/dev/null ||
    die "java is not on PATH; run scripts/setup.sh (it installs openjdk-17-jre-headless)"
  compgen -G "$libs/kafka_2.13-*.jar" >/dev/null ||
    die "no Kafka jars in $libs; run scripts/setup.sh (scripts/setup.d/kafka.sh downloads them)"
}

# True while PID names a live process. A killed process whose parent has not reaped it yet
# (a zombie: state Z in /proc) counts as gone once all its threads have exited: the JVM's main
# thread turns Z first while other threads still hold the sockets open.
alive() {
  local pid="$1" state threads
  [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null || return 1
  state="$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null || true)"
  [[ -n "$state" ]] || return 1
  [[ "$state" != Z ]] && return 0
  threads="$(find "/proc/$pid/task" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)"
  ((threads > 1))
}

port_open() {
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# A Kafka cluster id: 16 random bytes in URL-safe base64 without padding (what
# `kafka-storage.sh random-uuid` prints), made here to save a JVM start. Like Kafka's own
# Uuid.randomUuid(), never one starting with "-": command-line parsers take that for an option.
random_cluster_id() {
  local id="-"
  while [[ "$id" == -* ]]; do
    id="$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n')"
  done
  echo "$id"
}

write_config() {
  local dir="$1" port="$2" controller_port="$3"
  cat >"$dir/server.properties" <<PROPS
# Written by scripts/kafka-broker.sh: single-node KRaft broker+controller for tests.
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$controller_port
listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$controller_port
advertised.listeners=PLAINTEXT://127.0.0.1:$port
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
log.dirs=$dir/data
# One replica is all a single node has.
default.replication.factor=1
min.insync.replicas=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=4
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=4
# Tests create their topics (with the partition counts they need) through the Admin API.
auto.create.topics.enable=false
num.partitions=1
# A group's first join would otherwise wait 3 s for more members.
group.initial.rebalance.delay.ms=0
# Small and quick: few threads, compaction checked often, short segments roll on demand.
num.network.threads=2
num.io.threads=2
background.threads=2
log.cleaner.threads=1
log.cleaner.backoff.ms=1000
log.cleaner.dedupe.buffer.size=4194304
num.recovery.threads.per.data.dir=1
PROPS
  if [[ -n "${KAFKA_EXTRA_PROPERTIES:-}" ]]; then
    printf '# KAFKA_EXTRA_PROPERTIES\n%s\n' "$KAFKA_EXTRA_PROPERTIES" >>"$dir/server.properties"
  fi
  cat >"$dir/log4j.properties" <<LOG4J
log4j.rootLogger=INFO, file
log4j.appender.file=org.apache.log4j.FileAppender
log4j.appender.file.File=$dir/server.log
log4j.appender.file.layout=org.apache.log4j.PatternLayout
log4j.appender.file.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.org.apache.kafka.clients=WARN
log4j.logger.kafka.request.logger=WARN
LOG4J
}

# The tail of the broker's own logs, so a failed start explains itself.
show_logs() {
  local dir="$1" file
  for file in "$dir/jvm.out" "$dir/server.log"; do
    if [[ -s "$file" ]]; then
      echo "---- last lines of $file ----" >&2
      grep -E 'ERROR|FATAL|Exception|Caused by' "$file" | tail -n 15 >&2 || true
      tail -n 10 "$file" >&2
    fi
  done
}

start_watchdog() {
  local dir="$1" broker_pid="$2" owner_pid="$3" cleanup="${KAFKA_OWNER_CLEANUP:-0}"
  (
    trap '' HUP INT
    while alive "$owner_pid" && alive "$broker_pid"; do sleep 1; done
    if alive "$broker_pid"; then
      kill -KILL "$broker_pid" 2>/dev/null || true
      if [[ "$cleanup" == 1 ]]; then
        sleep 1
        rm -rf "$dir"
      fi
    fi
  ) </dev/null >/dev/null 2>&1 &
  echo $! >"$dir/watchdog.pid"
}

cmd_start() {
  [[ $# -ge 2 ]] || usage
  local dir="$1" port="$2" controller_port="${3:-$(($2 + 1))}"
  require_runtime
  mkdir -p "$dir"
  dir="$(cd "$dir" && pwd)"
  if [[ -f "$dir/broker.pid" ]] && alive "$(cat "$dir/broker.pid")"; then
    die "a broker already runs from $dir (pid $(cat "$dir/broker.pid")); stop it first"
  fi
  for p in "$port" "$controller_port"; do
    ! port_open "$p" || die "port $p on 127.0.0.1 is already in use"
  done
  write_config "$dir" "$port" "$controller_port"
  : >"$dir/server.log"
  if [[ ! -f "$dir/data/meta.properties" ]]; then
    # shellcheck disable=SC2086  # the option variables hold several words on purpose
    java $heap_opts $jvm_opts -Dlog4j.configuration="file:$dir/log4j.properties" \
      -cp "$libs/*" kafka.tools.StorageTool format --ignore-formatted \
      --cluster-id="${KAFKA_CLUSTER_ID:-$(random_cluster_id)}" --config="$dir/server.properties" >"$dir/format.out" 2>&1 ||
      { cat "$dir/format.out" >&2; die "formatting the KRaft storage in $dir/data failed"; }
  fi
  # The JVM keeps none of this script's descriptors: whoever waits for this script's output
  # (a test reading a pipe) must see EOF when the script ends, not when the broker does.
  # shellcheck disable=SC2086
  (exec java $heap_opts $jvm_opts -Djava.awt.headless=true \
    -Dlog4j.configuration="file:$dir/log4j.properties" -Dkafka.logs.dir="$dir" \
    -cp "$libs/*" kafka.Kafka "$dir/server.properties") </dev/null >"$dir/jvm.out" 2>&1 &
  local broker_pid=$!
  echo "$broker_pid" >"$dir/broker.pid"
  if [[ -n "${KAFKA_OWNER_PID:-}" ]]; then
    start_watchdog "$dir" "$broker_pid" "$KAFKA_OWNER_PID"
  fi

  if [[ "${KAFKA_START_WAIT:-1}" == 0 ]]; then
    echo "kafka broker pid $broker_pid launched on 127.0.0.1:$port (controller :$controller_port), dir $dir"
    return 0
  fi
  wait_until_serving "$dir" "$port"
  echo "kafka broker pid $broker_pid on 127.0.0.1:$port (controller :$controller_port), dir $dir"
}

wait_until_serving() {
  local dir="$1" port="$2" broker_pid timeout="${KAFKA_START_TIMEOUT:-90}" waited=0
  broker_pid="$(cat "$dir/broker.pid" 2>/dev/null || true)"
  [[ -n "$broker_pid" ]] || die "no broker was started from $dir"
  # "Kafka Server started" is logged once the broker has caught up with the metadata log and
  # its client listener serves requests; the port check guards against log wording changes.
  until grep -q 'Kafka Server started' "$dir/server.log" 2>/dev/null && port_open "$port"; do
    if ! alive "$broker_pid"; then
      show_logs "$dir"
      die "the broker exited during start-up (logs above, all in $dir)"
    fi
    if ((waited >= timeout * 10)); then
      kill -KILL "$broker_pid" 2>/dev/null || true
      show_logs "$dir"
      die "the broker did not accept clients on 127.0.0.1:$port within ${timeout}s"
    fi
    sleep 0.1
    waited=$((waited + 1))
  done
}

stop_process_in() {
  local dir="$1" signal="$2" pid waited=0
  [[ -f "$dir/watchdog.pid" ]] && kill -KILL "$(cat "$dir/watchdog.pid")" 2>/dev/null || true
  rm -f "$dir/watchdog.pid"
  [[ -f "$dir/broker.pid" ]] || return 0
  pid="$(cat "$dir/broker.pid")"
  if alive "$pid"; then
    kill "-$signal" "$pid" 2>/dev/null || true
    local limit=$((${KAFKA_STOP_TIMEOUT:-20} * 10))
    while alive "$pid"; do
      if ((waited >= limit)); then
        echo "kafka-broker.sh: broker $pid ignored SIG$signal for ${KAFKA_STOP_TIMEOUT:-20}s; killing" >&2
        kill -KILL "$pid" 2>/dev/null || true
        limit=$((limit + 50))
      fi
      sleep 0.1
      waited=$((waited + 1))
    done
  fi
  rm -f "$dir/broker.pid"
}

cmd_run_class() {
  [[ $# -ge 1 ]] || usage
  require_runtime
  local class="$1"
  shift
  local quiet_log4j
  quiet_log4j="$(mktemp)"
  printf 'log4j.rootLogger=WARN, err\nlog4j.appender.err=org.apache.log4j.ConsoleAppender\nlog4j.appender.err.Target=System.err\nlog4j.appender.err.layout=org.apache.log4j.PatternLayout\nlog4j.appender.err.layout.ConversionPattern=%%p %%m (%%c)%%n\n' >"$quiet_log4j"
  local status=0
  # shellcheck disable=SC2086
  java $jvm_opts -Xmx256m -Dlog4j.configuration="file:$quiet_log4j" -cp "$libs/*" \
    "$class" "$@" || status=$?
  rm -f "$quiet_log4j"
  return "$status"
}

[[ $# -ge 1 ]] || usage
command="$1"
shift
case "$command" in
  start) cmd_start "$@" ;;
  stop)
    [[ $# -eq 1 ]] || usage
    stop_process_in "$1" TERM
    ;;
  kill)
    [[ $# -eq 1 ]] || usage
    stop_process_in "$1" KILL
    ;;
  wait)
    [[ $# -eq 2 ]] || usage
    wait_until_serving "$(cd "$1" && pwd)" "$2"
    ;;
  run-class) cmd_run_class "$@" ;;
  *) usage ;;
esac
