#!/usr/bin/env bash
# The offloaded chain on two worker cores (issue 22 item 6): the agent side of FW(1000)->NAPT->LB with the
# firewall offloaded (frames tagged as the switch tags them, dispatched by tag, NAPT->LB per group), tags
# dispatched to 2 worker cores (group g on core g % 2, its frames on that core's rx queue of the memory-fed port:
# each worker is fed from memory of its own, no generator thread) against the same groups on 1 worker core, in
# the same run, rounds interleaved, medians, hugepages as in run.sh (group_dispatch_bench LCORES).
#
# Workers are EAL lcores 0 and 1, pinned by the EAL to CPUs 0 and 1; the one-core run is lcore 0. Throughput is
# Mpps per CPU-second of each worker's own thread, summed over the workers (what they sustain when each has its
# CPU); the wall rate and the CPU share the workers got are kept in the JSON. On this 2-CPU machine the same
# round also runs the machine's own ceiling for two cores: two one-core processes at once (one on each CPU, each
# the whole one-core workload), whose summed per-CPU-second rate against one alone is what two CPUs give two
# independent copies of the work (shared L3 and memory, the host under the VM): the two-core row is read
# against it.
# usage: two_cores_bench.sh BUILD_DIR RESULTS_DIR     env: AGENT_BENCH_SECONDS (3), AGENT_BENCH_ROUNDS (3),
#   TWO_CORES_GROUPS (2 4 16, a smoke run 2: the group counts, split evenly over the two cores)
# Writes RESULTS_DIR/agent_offloaded_napt_lb_<N>groups_2cores.json and agent_two_cpu_ceiling_<N>groups.json.
set -euo pipefail
BUILD=$(realpath "$1")
RESULTS=$(realpath "$2")
HERE=$(dirname "$(realpath "$0")")
# shellcheck source=common.sh
source "$HERE/common.sh"
[[ -f $DATA/rules1000.txt ]] || $PY "$HERE/gen_traffic.py" rules 1000 "$DATA/rules1000.txt"
[[ -f $DATA/flows100k.pcap ]] || $PY "$HERE/gen_traffic.py" pcap 100000 100000 "$DATA/flows100k.pcap"
TRACE=$DATA/flows100k.pcap
configs
deployed_group  # every group runs the chain's group as the synthesizer writes it (common.sh)
GROUP_CLICK=$DEPLOYED_CLICK

# gd GROUPS LCORES: group_dispatch_bench's output (result, worker and per_cpu lines)
gd() {
  local out
  out=$("${HUGE_ENV[@]}" "$BUILD/group_dispatch_bench" "$TRACE" "$1" "$SECS" "$GROUP_CLICK" "$2" 2>&1) ||
    { echo "$out" >&2; echo "two_cores_bench: group_dispatch_bench $1 groups on lcores $2 failed" >&2; return 1; }
  echo "$out"
}
# one GROUPS: "mpps_cpu mpps_wall cycles cpu_share" of one worker (lcore 0)
one() {
  gd "$1" 0 | awk '/^result/{printf "%s %s %s %.3f\n", $2, $3, $4, ($2 > 0 ? $3 / $2 : 0)}'
}
# two GROUPS: "mpps_cpu mpps_wall cycles cpu_share per_cpu w0 w1" of two workers (lcores 0-1); cpu_share: the
# CPU-seconds both workers got per second of wall time (2.0 = each had its CPU throughout)
two() {
  gd "$1" 0-1 | awk '/^result/{c=$2; w=$3; y=$4} /^worker/{r[n++]=$5; cs+=$4; p+=$3} /^per_cpu/{pc=$2}
    END{printf "%s %s %s %.3f %s %s %s\n", c, w, y, cs * w * 1e6 / p, pc, r[0], r[1]}'
}
# pair GROUPS: "sum_mpps_cpu sum_mpps_wall a_mpps_cpu b_mpps_cpu cpu_share" of two one-core processes at once, on
# CPU 0 and CPU 1 (the machine's ceiling for two independent copies of the one-core work)
pair() {
  local a b
  a=$(mktemp) b=$(mktemp)
  gd "$1" 0 >"$a" & local pa=$!
  gd "$1" 1 >"$b" & local pb=$!
  local rc=0
  wait "$pa" || rc=1
  wait "$pb" || rc=1
  if (( rc )); then rm -f "$a" "$b"; return 1; fi
  awk 'BEGIN{n = 0} /^result/{c[n]=$2; w[n]=$3; n++}
    END{printf "%.3f %.3f %s %s %.3f\n", c[0] + c[1], w[0] + w[1], c[0], c[1], w[0] / c[0] + w[1] / c[1]}' "$a" "$b"
  rm -f "$a" "$b"
}
col() { local k=$1; shift; printf '%s\n' "$@" | awk -v k="$k" '{print $k}' | median; }

# 2 x the deployed groups: the deployed chain with each group split once, as the controller splits an overloaded
# group onto another core, against the chain as deployed on one core (its groups unsplit): the chain's own two-core
# ratio. 4 and 16: chains with more groups, against the same groups on one core. A smoke run (BENCH_SMOKE=1, make
# test) runs the deployed chain's rows only.
SPLIT=$((2 * DEPLOYED_GROUPS))
GROUP_COUNTS=${TWO_CORES_GROUPS:-$SPLIT 4 16}
if [[ ${BENCH_SMOKE:-0} == 1 ]]; then GROUP_COUNTS=${TWO_CORES_GROUPS:-$SPLIT}; fi
for groups in $GROUP_COUNTS; do
  o=() t=() p=()
  # base: the groups of the one-core run (and of each one-core process of the ceiling)
  base=$groups what="same groups on 1 worker core, same run"
  if (( groups == SPLIT )); then base=$DEPLOYED_GROUPS what="the chain as deployed on 1 worker core ($base group(s), unsplit), same run"; fi
  for _ in $(seq "$ROUNDS"); do o+=("$(one "$base")"); t+=("$(two "$groups")"); p+=("$(pair "$base")"); done
  load=$(cut -d' ' -f1-3 /proc/loadavg)
  write "agent_offloaded_napt_lb_${groups}groups_2cores" \
    "Offloaded chain's agent side on 2 worker cores: tagged frames, $groups groups dispatched by tag to 2 cores ($((groups / 2)) each, each core fed from memory on its own rx queue), NAPT->LB per group, 100k flows; Mpps per CPU-second of each worker, summed (median of $ROUNDS interleaved rounds)" \
    "$(col 1 "${t[@]}")" Mpps "$what" "$(col 1 "${o[@]}")" \
    "\"wall_value\": $(col 2 "${t[@]}"), \"baseline_wall_value\": $(col 2 "${o[@]}"), \"per_cpu_value\": $(col 5 "${t[@]}"), \"worker_values\": [$(col 6 "${t[@]}"), $(col 7 "${t[@]}")], \"cpu_share\": $(col 4 "${t[@]}"), \"baseline_cpu_share\": $(col 4 "${o[@]}"), \"cycles_per_packet\": $(col 3 "${t[@]}"), \"baseline_cycles_per_packet\": $(col 3 "${o[@]}"), \"two_cpu_ceiling_value\": $(col 1 "${p[@]}"), \"rounds\": \"${t[*]%% *} / ${o[*]%% *}\", \"load_average\": \"$load\", \"target_ratio\": 1.8"
  write "agent_two_cpu_ceiling_${groups}groups" \
    "This machine's two-CPU ceiling for the same work: two one-core processes at once (CPU 0 and CPU 1), each the whole one-core workload ($base groups, 100k flows); Mpps per CPU-second of each, summed (median of $ROUNDS interleaved rounds)" \
    "$(col 1 "${p[@]}")" Mpps "one core alone, same run" "$(col 1 "${o[@]}")" \
    "\"wall_value\": $(col 2 "${p[@]}"), \"baseline_wall_value\": $(col 2 "${o[@]}"), \"process_values\": [$(col 3 "${p[@]}"), $(col 4 "${p[@]}")], \"cpu_share\": $(col 5 "${p[@]}"), \"baseline_cpu_share\": $(col 4 "${o[@]}"), \"rounds\": \"${p[*]%% *} / ${o[*]%% *}\", \"load_average\": \"$load\""
done
