#!/usr/bin/env bash
# The agent's hot path, this build against a previous one in the same run (issue 25 item 5): rounds interleaved
# (this build, the previous one, this build, ...), medians, Mpps per CPU-second of the worker, hugepages as in
# run.sh. Rows: the memory-fed standalone NAPT and IPFilter(1000) on the 100k-flow trace (run.sh's
# *_100k_replay rows), and the offloaded chain's agent side (group_dispatch_bench: frames tagged as the switch
# tags them, dispatched by tag to 1 group (the FW(1000)->NAPT->LB chain as deployed, targets_bench.sh), to 4 and to 16
# groups on one core, each running NAPT->LB as synthesized).
# usage: hotpath_ab.sh BUILD_DIR BASE_DIR RESULTS_DIR [LABEL]
#   BASE_DIR holds the previous build's metron-agent and group_dispatch_bench; LABEL names it in the JSON
#   (default: BASE_DIR's name). env: AGENT_BENCH_SECONDS (2), AGENT_BENCH_ROUNDS (5), HOTPATH_ROWS (all: a
#   space-separated subset of napt ipfilter groups1 groups4 groups16, and groups16_1m (the 16 groups on the 1M-flow trace,
#   hugepages for -m 2048) and chain (the software-only FW(1000)->NAPT->LB, memory-fed): not in the default set)
# Writes RESULTS_DIR/agent_hotpath_<row>.json.
set -euo pipefail
BUILD=$(realpath "$1")
BASE=$(realpath "$2")
RESULTS=$(realpath "$3")
LABEL=${4:-$(basename "$BASE")}
HERE=$(dirname "$(realpath "$0")")
AGENT_BENCH_SECONDS=${AGENT_BENCH_SECONDS:-2}
AGENT_BENCH_ROUNDS=${AGENT_BENCH_ROUNDS:-5}
# shellcheck source=common.sh
source "$HERE/common.sh"
ROWS=${HOTPATH_ROWS:-napt ipfilter groups1 groups4 groups16}
[[ -f $DATA/rules1000.txt ]] || $PY "$HERE/gen_traffic.py" rules 1000 "$DATA/rules1000.txt"
[[ -f $DATA/flows100k.pcap ]] || $PY "$HERE/gen_traffic.py" pcap 100000 100000 "$DATA/flows100k.pcap"
TRACE=$DATA/flows100k.pcap
TRACE1M=$DATA/flows1m.pcap
[[ " $ROWS " != *" groups16_1m "* || -f $TRACE1M ]] || $PY "$HERE/gen_traffic.py" pcap 1000000 1000000 "$TRACE1M"
configs
CHAIN_R=$(replay_cfg chain_replay "$CHAIN")
NAPT_R=$(replay_cfg napt_replay "$NAPT")
FILTER_R=$(replay_cfg filter_replay "$FILTER")
# standalone DIR CLICK: "mpps_cpu mpps_wall cycles_per_packet" of DIR/metron-agent on the memory-fed trace
standalone() { replay_agent "$1/metron-agent" "$2" "$TRACE"; }
# groups DIR N [TRACE]: the same figures of DIR/group_dispatch_bench with N groups (NAPT->LB each, GROUP_NAPT_LB)
groups() { group_run "$1/group_dispatch_bench" "$2" "${3:-$TRACE}"; }

col() { local k=$1; shift; printf '%s\n' "$@" | awk -v k="$k" '{print $k}' | median; }
# paired "A..." "B...": the median (common.sh's, as every other figure here) of the rounds' ratios A_i / B_i
# (first fields), in how many rounds A_i > B_i, and of how many. On a machine whose rounds swing by tens of percent
# between minutes, a round and its neighbour share their conditions, so the paired ratio is the evidence of a
# change, not the ratio of medians.
paired() {
  local r
  r=$(paste -d' ' <(tr ' ' '\n' <<<"$1") <(tr ' ' '\n' <<<"$2") | awk '$1 > 0 && $2 > 0 {print $1 / $2}')
  printf '%.3f %d %d\n' "$(median <<<"$r")" "$(awk '$1 > 1' <<<"$r" | wc -l)" "$(awk 'END{print NR}' <<<"$r")"
}
# ab NAME DESCRIPTION COMMAND...: COMMAND run with this build's directory and BASE's, interleaved
ab() {
  local name=$1 what=$2 m=() b=()
  shift 2
  for _ in $(seq "$ROUNDS"); do m+=("$("$1" "$BUILD" "${@:2}")"); b+=("$("$1" "$BASE" "${@:2}")"); done
  local pr
  read -r -a pr <<<"$(paired "${m[*]%% *}" "${b[*]%% *}")"
  echo "hotpath_ab: $name: paired ratio ${pr[0]} (this build above the previous in ${pr[1]} of ${pr[2]} rounds)"
  write "agent_hotpath_$name" "$what (Mpps per CPU-second, one lcore, median of $ROUNDS interleaved rounds)" "$(col 1 "${m[@]}")" \
    Mpps "previous build ($LABEL)" "$(col 1 "${b[@]}")" \
    "\"wall_value\": $(col 2 "${m[@]}"), \"baseline_wall_value\": $(col 2 "${b[@]}"), \"cycles_per_packet\": $(col 3 "${m[@]}"), \"baseline_cycles_per_packet\": $(col 3 "${b[@]}"), \"rounds\": \"${m[*]%% *} / ${b[*]%% *}\", \"paired_ratio\": ${pr[0]}, \"rounds_above\": ${pr[1]}, \"load_average\": \"$(cut -d' ' -f1-3 /proc/loadavg)\""
}

for row in $ROWS; do
  case $row in
    napt) ab napt_100k_replay "NAPT (SynthRewriter), 100k flows, memory-fed input, standalone" standalone "$NAPT_R" ;;
    ipfilter) ab ipfilter1000_100k_replay "IPFilter, 1000 rules (rte_acl), 100k flows, memory-fed input, standalone" standalone "$FILTER_R" ;;
    groups1) ab offloaded_napt_lb_1group "Offloaded chain's agent side as deployed: tagged frames dispatched to 1 group on one core, NAPT->LB, 100k flows, memory-fed" groups 1 ;;
    groups4) ab offloaded_napt_lb_4groups "Offloaded chain's agent side: tagged frames dispatched to 4 groups on one core, NAPT->LB per group, 100k flows, memory-fed" groups 4 ;;
    groups16) ab offloaded_napt_lb_16groups "Offloaded chain's agent side: tagged frames dispatched to 16 groups on one core, NAPT->LB per group, 100k flows, memory-fed" groups 16 ;;
    groups16_1m) ab offloaded_napt_lb_16groups_1m "Offloaded chain's agent side: tagged frames dispatched to 16 groups on one core, NAPT->LB per group, 1M flows, memory-fed" groups 16 "$TRACE1M" ;;
    chain) ab chain_100k_replay "FW(1000)->NAPT->LB as synthesized, software only (--target NONE), 100k flows, memory-fed input, standalone" standalone "$CHAIN_R" ;;
    *) echo "hotpath_ab.sh: unknown row '$row'" >&2; exit 2 ;;
  esac
done
