#!/usr/bin/env bash
# Fault test: Restack under broker, worker and disk failures, checked event by event.
#
#   scripts/fault-test.sh [--minutes N] [--mode exactly_once|at_least_once] [--workers 2..8]
#                         [--slow-location auto|on|off] [--store-full auto|off] [--seed N] [--keep]
#
# What it does
#   1. Starts three KRaft Apache Kafka nodes on 127.0.0.1 (scripts/kafka-cluster.sh; jars from
#      scripts/setup.sh) and creates the topics with replication factor 3 and min.insync.replicas
#      2: restack.events.raw, restack.symbols, restack.pending (compacted) and the outputs with 6
#      partitions each (co-partitioned), restack.symbols.shared with 1. The consumer offsets and
#      the transaction state log are replicated 3 times (min ISR 2) by the cluster's settings.
#   2. Starts --workers (default 3) `restack run` processes in one group, each with its own store
#      and log (WORK/w<i>/). --mode sets kafka.delivery in their config; without --mode the key
#      is not written (the worker's default). A restack that knows kafka.transactional_id gets
#      one per worker (they share a host: the default "<group>-<hostname>" would collide).
#   3. Produces the demo samples (worker/demo/samples) as 24 builds (apps fa0..fa3 x 6 builds):
#      every event kind (iOS, Android native, Java crash/ANR/lag, web V8 and Firefox, React
#      Native, and one unreadable event per copy) in about 5 copies per minute of run time per
#      build, spread over 60% of the run. 15 of the 24 builds (all of app fa3, every other build
#      of the others) get their symbol uploads LATE, after 40% of their events, so those events go out pending and must be
#      restored later. Some late builds take mapping.txt from a slow location (below).
#   4. Meanwhile injects faults at random, one at a time, every 3-10 s until 80% of the run:
#      SIGKILL of a worker (restarted 0.5-4.5 s later); SIGSTOP of a worker for longer than its
#      session timeout, then SIGCONT; kill -9 of a broker node and its restart; a controlled
#      shutdown of a node and its restart; worker 1's store volume (a 64 MiB tmpfs) filled up
#      for 10-20 s, then freed — only as root, otherwise that fault is SKIPPED and the output
#      says so. A worker that exits on its own is restarted after 2 s, like a pod.
#      The slow location: an HTTP server on 127.0.0.1 sending each file in 40 pieces over 10 s.
#      When the restack binary knows uploads.allowed_networks, the workers get
#      uploads.http_hosts "127.0.0.1", uploads.allow_plain_http true and
#      uploads.allowed_networks "127.0.0.0/8"; --slow-location off leaves the slow location out.
#   5. Lets the workers drain (until every event has its final outcome, or the group committed
#      everything and no output came for 30 s), stops them with SIGTERM, reads
#      restack.events.symbolicated and restack.events.dlq from the beginning with
#      isolation.level=read_committed, and compares each restored event with
#      `restack symbolicate` run offline on the same event with all of its build's symbols.
#
# How it counts (loadtest/fault/outcome.h)
#   - Compared: the whole restored event except event_id — threads with their frames (function,
#     file, line, column, status…) and restored text, exception, symbolication (status, missing
#     ids, counts) and the fingerprint without "replaces" (a late restoration names the
#     provisional fingerprint it replaces; offline there is none) and without its copy of the
#     event id. Nothing in a restored event
#     depends on time, so no other field is left out.
#   - PROVISIONAL output: symbolication.status "pending" where the offline restoration is not
#     pending; the worker published it before the symbols came and owes a FINAL output later.
#     Provisional then final is not a duplicate. (The iOS event's UIKitCore frame is never
#     uploaded: an operating-system image, reason system_image, which holds no event, so that
#     event too is pending only until its app's dSYM comes.)
#   - An unreadable event's final outcome is its DLQ record.
#   - restored: at least one final outcome, all equal to the offline one.
#   - wrong: a final outcome that differs, a restorable event on the DLQ, or an unreadable one
#     restored. lost: no final outcome (the details line says how many of them only got a
#     provisional output). restored + lost + wrong = events.
#   - duplicated: final outcomes beyond the first plus provisional outcomes beyond the first.
#   - kills: worker SIGKILLs; broker outages: kill -9 plus controlled shutdowns of a node.
#   - at-least-once bound: 2 x batch size (100) x (kills + worker exits on their own + partition
#     handovers without a commit + 1). A handover is a line of a worker's log saying its
#     assignment was "lost" (the group took its partitions while it was stopped or busy) or that
#     offsets "could not be committed before it moved" (a commit refused after a broker outage
#     moved the group coordinator). Each time, the publication in flight and the batch restored
#     beside it may be restored again by the next owner. One fault can cost several workers their
#     assignment, so the logs are counted, not the faults.
#
# Result: the last line is exactly
#   fault: events N, restored N, lost L, duplicated D, wrong W, kills K, broker outages B, mode M
# (M is the --mode given, or "default"). Exit status 1 when lost > 0 or wrong > 0, or duplicated
# > 0 in exactly_once mode, or duplicated above the at-least-once bound otherwise; 2 when the
# test could not run. The work folder (logs of every worker and broker) is kept when the test
# fails or with --keep, and removed otherwise.
#
# Builds needed: `restack` and `restack_fault` in build/ (or RESTACK_BUILD_DIR), e.g.
#   scripts/build.sh build -DRESTACK_BENCHMARKS=OFF --target restack --target restack_fault
set -euo pipefail

# All in one function, read whole before it runs: editing this file during a run (a long one)
# must not change what the running shell executes next.
main() {
  repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  build="${RESTACK_BUILD_DIR:-$repo/build}"
  minutes=3
  driver_args=()
  keep=0
  while (($# > 0)); do
    case "$1" in
      --minutes)
        minutes="$2"
        shift 2
        ;;
      --mode | --workers | --slow-location | --store-full | --seed)
        driver_args+=("$1" "$2")
        shift 2
        ;;
      --keep)
        keep=1
        shift
        ;;
      -h | --help)
        sed -n '2,5p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
        exit 0
        ;;
      *)
        echo "fault-test.sh: unknown option $1 (see --help)" >&2
        exit 2
        ;;
    esac
  done

  restack="$build/worker/restack"
  driver="$build/loadtest/fault/restack_fault"
  for program in "$restack" "$driver"; do
    [[ -x "$program" ]] || {
      echo "fault-test.sh: $program is missing; build it: scripts/build.sh build -DRESTACK_BENCHMARKS=OFF --target restack --target restack_fault" >&2
      exit 2
    }
  done

  work="$(mktemp -d "${TMPDIR:-/tmp}/restack-fault-XXXXXX")"
  status=2
  cleanup() {
    "$repo/scripts/kafka-cluster.sh" kill "$work/kafka" >/dev/null 2>&1 || true
    # The driver unmounts the store volume; a driver killed halfway leaves it mounted.
    if mountpoint -q "$work/w1/store-volume" 2>/dev/null; then umount -l "$work/w1/store-volume" || true; fi
    if [[ "$status" == 0 && "$keep" == 0 ]]; then
      rm -rf "$work"
    else
      echo "fault-test.sh: logs kept in $work (driver.log, w<i>/worker.log, kafka/node<i>/server.log)"
    fi
    if [[ -n "${verdict:-}" ]]; then echo "$verdict"; fi
  }
  trap cleanup EXIT
  trap 'exit 130' INT TERM

  echo "fault-test.sh: starting a 3-node Kafka cluster in $work/kafka"
  KAFKA_OWNER_PID=$$ "$repo/scripts/kafka-cluster.sh" start "$work/kafka" 3
  bootstrap="$("$repo/scripts/kafka-cluster.sh" bootstrap "$work/kafka")"

  set +e
  "$driver" --restack "$restack" --bootstrap "$bootstrap" --cluster-dir "$work/kafka" \
    --cluster-script "$repo/scripts/kafka-cluster.sh" --samples "$repo/worker/demo/samples" \
    --work "$work" --minutes "$minutes" "${driver_args[@]}" 2>&1 | tee "$work/driver.log" |
    grep --line-buffered -v '^fault: events '   # printed once, as the very last line, by cleanup
  status=${PIPESTATUS[0]}
  set -e
  verdict="$(grep '^fault: events ' "$work/driver.log" | tail -n 1 || true)"
  exit "$status"
}

main "$@"
exit $?
