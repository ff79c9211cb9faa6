#!/usr/bin/env bash
# Checks deploy/agent against the binary it documents:
#  1. every option in README.md's option table appears in `metron-agent --help`;
#  2. metron-agent started exactly as metron-agent.service starts it, with the example metron-agent.conf, serves
#     the control API, exits 0 on SIGTERM and leaves no EAL runtime directory behind. It runs in a private netns holding the conf's --fanout interface
#     (a veth), with the core list and EAL file prefix shrunk to this machine and this run.
# usage: check-example-conf.sh path/to/metron-agent        (root: creates and deletes a netns)
set -euo pipefail
AGENT=$(realpath "$1")
HERE=$(cd "$(dirname "$0")" && pwd)

help=$("$AGENT" --help)
for opt in $(grep -o '^| `--[a-z-]*' "$HERE/README.md" | sed 's/^| `//'); do
  grep -q -- "$opt" <<<"$help" || { echo "FAIL: README documents $opt but --help does not"; exit 1; }
done

[ "$(id -u)" = 0 ] || { echo "SKIP: the startup check needs root"; exit 0; }
NS=metron-conf-$$
LOG=$(mktemp)
PID=
STATE=
cleanup() {
  [ -n "$PID" ] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null || true
  ip netns del "$NS" 2>/dev/null || true
  rm -rf "/var/run/dpdk/metron-conf-$$"  # only if the agent failed before removing it
  rm -f "$LOG"
  rm -rf "$STATE"
}
trap cleanup EXIT

# The service's variables, read the way systemd reads an EnvironmentFile with these simple values.
set -a
# shellcheck disable=SC1091
. "$HERE/metron-agent.conf"
set +a
FANOUT=$(grep -o -- '--fanout [^ "]*' <<<"$METRON_OPTS" | cut -d' ' -f2)
STATE=$(mktemp -d)  # the conf's --state-dir is the unit's /var/lib/metron-agent: not this machine's to fill
OPTS=$(sed -E "s/--cores [^ ]+/--cores 1/; s|--state-dir [^ ]+|--state-dir $STATE|" <<<"$METRON_OPTS")
EAL=$(sed -E "s/-l [^ ]+/-l 0-1/; s/--file-prefix [^ ]+/--file-prefix metron-conf-$$/" <<<"$METRON_EAL")

ip netns add "$NS"
ip -n "$NS" link set lo up
ip -n "$NS" link add "$FANOUT" type veth peer name "${FANOUT}p"
ip -n "$NS" link set "$FANOUT" up
ip -n "$NS" link set "${FANOUT}p" up

HP=/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages
HP_BEFORE=$(cat "$HP" 2>/dev/null || echo none)
# shellcheck disable=SC2086  # split like systemd's $VAR; started through hugepages.sh as the unit does
ip netns exec "$NS" "$HERE/../../agent/scripts/hugepages.sh" run "$METRON_MEMORY_MB" \
  "$AGENT" --listen "$METRON_LISTEN" $METRON_TLS $OPTS --dpdk $EAL -- >"$LOG" 2>&1 &
PID=$!
port=${METRON_LISTEN##*:}
for _ in $(seq 100); do
  ip netns exec "$NS" ss -ltn "sport = :$port" | grep -q LISTEN && break
  kill -0 "$PID" 2>/dev/null || { echo "FAIL: agent exited at start:"; cat "$LOG"; exit 1; }
  sleep 0.1
done
ip netns exec "$NS" ss -ltn "sport = :$port" | grep -q LISTEN || { echo "FAIL: not listening on $port"; cat "$LOG"; exit 1; }
grep -q "serving on port $port" "$LOG" || { echo "FAIL: no startup line"; cat "$LOG"; exit 1; }
kill -TERM "$PID"
rc=0
wait "$PID" || rc=$?
PID=
STATE=
[ "$rc" = 0 ] || { echo "FAIL: exit status $rc after SIGTERM"; cat "$LOG"; exit 1; }
grep -q "state: saved 0 group(s) to $STATE" "$LOG" || { echo "FAIL: no state save at SIGTERM"; cat "$LOG"; exit 1; }
[ ! -e "/var/run/dpdk/metron-conf-$$" ] || { echo "FAIL: /var/run/dpdk/metron-conf-$$ left behind"; exit 1; }
grep -q "^hugepages: " "$LOG" || { echo "FAIL: the wrapper did not say whether it runs on hugepages"; cat "$LOG"; exit 1; }
[ "$(cat "$HP" 2>/dev/null || echo none)" = "$HP_BEFORE" ] || { echo "FAIL: nr_hugepages $HP_BEFORE before, $(cat "$HP") after"; exit 1; }
grep "^hugepages: " "$LOG"
echo "OK: example conf starts the agent on $METRON_LISTEN with --fanout $FANOUT; clean exit on SIGTERM"
