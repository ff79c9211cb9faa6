#!/usr/bin/env bash
# Latency through the dispatcher (group_latency_bench: an Engine worker fed open loop by a paced port, time on the
# worker's CPU clock) with the group hold on and off: p50/p99 at 10/50/90 % of the maximum with the hold on,
# against the hold off at the same offered rates (in each JSON also the hold off at fractions of its own maximum).
# 4 and 16 groups (a smoke run: 4), medians of $ROUNDS runs. Writes RESULTS_DIR/agent_offloaded_hold_latency_*.json.
# usage: hold_latency_bench.sh BUILD_DIR RESULTS_DIR     env: AGENT_BENCH_SECONDS (3), AGENT_BENCH_ROUNDS (3)
set -euo pipefail
BUILD=$(realpath "$1")
RESULTS=$(realpath "$2")
HERE=$(dirname "$(realpath "$0")")
# shellcheck source=common.sh
source "$HERE/common.sh"
[[ -f $DATA/flows100k.pcap ]] || $PY "$HERE/gen_traffic.py" pcap 100000 100000 "$DATA/flows100k.pcap"
TRACE100K=$DATA/flows100k.pcap
hold_latency() {  # GROUPS
  local outs=() f l pct q
  for _ in $(seq "$ROUNDS"); do
    f=$(mktemp); outs+=("$f")
    "${HUGE_ENV[@]}" "$BUILD/group_latency_bench" "$TRACE100K" "$1" "$SECS" 0.1 0.5 0.9 >"$f" 2>"$f.err" ||
      { cat "$f.err" >&2; echo "group_latency_bench $1 groups failed" >&2; return 1; }
    rm -f "$f.err"
  done
  pick() { cat "${outs[@]}" | awk -v s="$1" -v l="$2" -v k="$3" '$1 == "load" && $2 == s && $3 == l {print $k}' | median; }
  mx() { cat "${outs[@]}" | awk -v s="$1" '$1 == "max" && $2 == s {print $3}' | median; }
  for l in 0.10 0.50 0.90; do
    pct=$(awk -v l="$l" 'BEGIN{printf "%d", l * 100}')
    for q in p50:5 p99:6; do
      write "agent_offloaded_hold_latency_${1}groups_${pct}_${q%%:*}" \
        "Offloaded chain's agent side ($1 groups by tag, NAPT->LB per group, 100k flows), ${q%%:*} latency through the dispatcher at $pct % of the maximum with the group hold on (Engine::set_group_hold, 512 frames / 100 us), CPU clock of the worker" \
        "$(pick on "$l" "${q#*:}")" us "group hold off, same offered rate" "$(pick off "$l" "${q#*:}")" \
        "\"offered_mpps\": $(pick on "$l" 4), \"dropped\": $(pick on "$l" 7), \"baseline_dropped\": $(pick off "$l" 7), \"off_own_value\": $(pick off_own "$l" "${q#*:}"), \"off_own_offered_mpps\": $(pick off_own "$l" 4), \"max_mpps_hold_on\": $(mx on), \"max_mpps_hold_off\": $(mx off)"
    done
  done
  rm -f "${outs[@]}"
}
HOLD_LATENCY_GROUPS="4 16"
if [[ ${BENCH_SMOKE:-0} == 1 ]]; then HOLD_LATENCY_GROUPS=4; fi
for g in $HOLD_LATENCY_GROUPS; do hold_latency "$g"; done
