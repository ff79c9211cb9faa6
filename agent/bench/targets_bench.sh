#!/usr/bin/env bash
# Issue 22's per-core targets, one row each (run by run.sh, so by `make bench` and, briefly, `make test`'s smoke):
# the workload's Mpps per CPU-second against the DPDK library calls it makes, alone, on the same trace in the same
# run, with where its cycles go and, when the target is missed, which stages stand in the way and what the library
# costs for the same work.
#   - offloaded FW(1000)->NAPT->LB: the agent side as deployed (the chain synthesized for a switch that holds the
#     whole firewall, common.sh's deployed_group: one group, NAPT->LB; frames tagged as the switch tags them, read
#     by an Engine worker that dispatches them by tag; group_dispatch_bench), 100k flows (target 15 Mpps); 16 such
#     groups sharing the core for 1M flows (12: one NAPT with one address maps at most 516,096 flows), and at 100k
#     as a stress row (a chain whose classes have 16 different stateful parts; the controller gives a group a core
#     of its own only when scaling);
#   - the software-only synthesized FW(1000)->NAPT->LB, 100k flows (10); NAPT (20) and IPFilter(1000) (20), 100k;
#     standalone graphs on the memory-fed port (--replay).
# Ceiling = I/O (the same memory-fed port into net_null, nothing between: rx + tx, the harness's own cost)
#         + rte_hash_lookup_bulk_data on the trace's keys in a table of all its flows (rows with a flow table)
#         + rte_acl_classify on the 1000 rules (rows with the firewall)            (datapath_ceiling_bench)
# Floor = the same work written by hand (handwritten_nat_bench: one l3fwd-style loop over the same port, the same
#         rte_hash call, the flow's record and the rewrite; and the same loop on the agent's FlowTable; rows with a
#         NAT): what the work costs with nothing but the work, so a row's distance from the ceiling splits into what
#         the work needs and what the agent adds around it.
# The row's baseline is that ceiling as a rate (its cycles at the row's clock), so `ratio` is the row's speed
# against it; the issue asks every row within 1.5x of it (ratio >= 0.667). Stages: one profiled run per row
# (standalone `--profile`; GROUP_PROFILE=1 for the groups: clock reads at element boundaries, once per batch),
# scaled to the unprofiled run's cycles per packet.
#   usage: targets_bench.sh BUILD_DIR RESULTS_DIR   (writes RESULTS_DIR/agent_target_*.json)
set -euo pipefail
BUILD=$(realpath "$1")
RESULTS=$(realpath "$2")
HERE=$(dirname "$(realpath "$0")")
# the 1M-flow row's tables (16 groups of 131,072-flow tables) and the ceiling's 1M-flow hash need 2 GB
AGENT_BENCH_EAL_MB=${AGENT_BENCH_EAL_MB:-2048}
# shellcheck source=common.sh
source "$HERE/common.sh"
[[ -f $DATA/rules1000.txt ]] || $PY "$HERE/gen_traffic.py" rules 1000 "$DATA/rules1000.txt"
[[ -f $DATA/flows100k.pcap ]] || $PY "$HERE/gen_traffic.py" pcap 100000 100000 "$DATA/flows100k.pcap"
T100K=$DATA/flows100k.pcap
# The 1M-flow trace takes scapy minutes to write once; the smoke run (seconds per bench) runs the 1M row on the
# 100k trace (its description says so).
T1M=$DATA/flows1m.pcap BIG=1m
if [[ ${BENCH_SMOKE:-0} == 1 ]]; then T1M=$T100K BIG=100k; fi
[[ -f $T1M ]] || $PY "$HERE/gen_traffic.py" pcap 1000000 1000000 "$T1M"
configs
IO_R=$(replay_cfg io_replay "$IO")
NAPT_R=$(replay_cfg napt_replay "$NAPT")
FILTER_R=$(replay_cfg filter_replay "$FILTER")
CHAIN_R=$(replay_cfg chain_replay "$CHAIN")
deployed_group

# standalone CLICK TRACE [profile] / deployed TRACE [profile] (the deployed groups) / groups16 TRACE [profile] (16
# of them on the core): "mpps_cpu mpps_wall cycles_per_packet", then the stage lines when asked (common.sh)
standalone() { replay_agent "$AGENT" "$1" "$2" "${3:+--profile}"; }
deployed() { group_run "$BUILD/group_dispatch_bench" "$DEPLOYED_GROUPS" "$1" "${2:-}" "$DEPLOYED_CLICK"; }
groups16() { group_run "$BUILD/group_dispatch_bench" 16 "$1" "${2:-}" "$DEPLOYED_CLICK"; }
# ceiling TRACE CAPACITY: "acl_cycles hash_cycles acl_algorithm" (datapath_ceiling_bench; the algorithm is
# rte_acl's classify implementation, the same AclClassifier picks for IPFilter)
ceiling() {
  result "${HUGE_ENV[@]}" "$BUILD/datapath_ceiling_bench" "$DATA/rules1000.txt" "$1" "$2" "$SECS" | awk '{print $1, $2, $4}'
}

# handwritten MODE TRACE CAPACITY: the cycles per packet of the same work as a hand-written DPDK loop with the same
# library calls (handwritten_nat_bench: napt, or deployed for the offloaded group's; MODE-index: with the agent's
# FlowTable for the rte_hash call)
handwritten() { result "${HUGE_ENV[@]}" "$BUILD/handwritten_nat_bench" "$2" "$3" "$SECS" "$1" | awk '{print $2}'; }

# [HAND=MODE] row NAME DESCRIPTION TARGET_MPPS PARTS TRACE CAPACITY MEASURE ARGS...: PARTS, the library calls of the
# ceiling (of "io hash acl"), measured on TRACE with a CAPACITY-flow table in the same rounds as the row; MEASURE
# ARGS... prints "mpps_cpu mpps_wall cycles" (then stage lines when given "profile" as its last argument). HAND: the
# row's work written by hand (handwritten MODE and MODE-index), also in the same rounds.
row() {
  local name=$1 what=$2 target=$3 parts=$4 trace=$5 cap=$6 fn=$7 m=() io=() lib=() hand=() prof
  shift 7
  for _ in $(seq "$ROUNDS"); do
    m+=("$("$fn" "$@" | head -1)")
    io+=("$(standalone "$IO_R" "$trace" | head -1 | cut -d' ' -f3)")
    lib+=("$(ceiling "$trace" "$cap")")
    [[ -z ${HAND:-} ]] || hand+=("$(handwritten "$HAND" "$trace" "$cap") $(handwritten "$HAND-index" "$trace" "$cap")")
  done
  prof=$("$fn" "$@" profile | tail -n +2)
  local mv mc iv av hv
  mv=$(printf '%s\n' "${m[@]}" | awk '{print $1}' | median); mc=$(printf '%s\n' "${m[@]}" | awk '{print $3}' | median)
  iv=$(printf '%s\n' "${io[@]}" | median)
  av=$(printf '%s\n' "${lib[@]}" | awk '{print $1}' | median); hv=$(printf '%s\n' "${lib[@]}" | awk '{print $2}' | median)
  local extra
  local hc=-
  (( ${#hand[@]} == 0 )) ||
    hc="${HAND}:$(printf '%s\n' "${hand[@]}" | awk '{print $1}' | median):$(printf '%s\n' "${hand[@]}" | awk '{print $2}' | median)"
  extra=$(PROF="$prof" $PY "$HERE/targets_row.py" "$mv" "$mc" "$target" "$parts" "$iv" "$hv" "$av" \
    "$(awk '{print $3}' <<<"${lib[0]}")" "$hc") ||
    { echo "targets_bench: $name: no stage breakdown" >&2; return 1; }
  local base_v
  base_v=$(jq -r .baseline_mpps <<<"{$extra}")
  write "agent_target_$name" "$what: Mpps per CPU-second (median of $ROUNDS), issue 22 target $target" "$mv" Mpps \
    "the DPDK library calls it makes ($parts), alone, same trace, same run: the same cycles as a rate" "$base_v" "$extra"
}

# every frame of the trace reaches the agent, the ones the switch would drop too (more flows than deployed)
AS_DEPLOYED="the agent side as deployed: the chain synthesized for a switch holding the whole firewall ($DEPLOYED_GROUPS group, NAPT->LB), tagged frames dispatched by tag on one core"
HAND=deployed row offloaded_napt_lb_100k "Offloaded FW(1000)->NAPT->LB, $AS_DEPLOYED, 100k flows, memory-fed" \
  15 "io hash" "$T100K" 131072 deployed "$T100K"
# 1M flows do not fit one NAPT with one public address and four backends (at most 64,512 ports x 4 x TCP/UDP =
# 516,096 mappings: the rest are mapping failures, dropped and counted, as Click's IPRewriter does): the 1M row runs
# 16 groups, each with a port space of its own (no port shares), so every flow maps.
HAND=deployed row offloaded_napt_lb_1m "Offloaded FW(1000)->NAPT->LB's group 16 times on one core, each NAPT with ports of its own (one group's NAPT maps at most 516,096 flows), tagged frames dispatched by tag, $BIG flows, memory-fed" \
  12 "io hash" "$T1M" 1048576 groups16 "$T1M"
HAND=deployed row offloaded_16groups_100k "Offloaded FW(1000)->NAPT->LB's group 16 times on one core (stress: a chain with 16 different stateful parts; the controller gives a group a core of its own only when scaling), tagged frames dispatched by tag, 100k flows, memory-fed; the chain's target shown" \
  15 "io hash" "$T100K" 131072 groups16 "$T100K"
row software_chain_100k "FW(1000)->NAPT->LB as synthesized, software only (--target NONE), one graph, 100k flows, memory-fed" \
  10 "io acl hash" "$T100K" 262144 standalone "$CHAIN_R" "$T100K"
HAND=napt row napt_100k "NAPT (SynthRewriter), 100k flows, memory-fed" 20 "io hash" "$T100K" 262144 standalone "$NAPT_R" "$T100K"
row ipfilter1000_100k "IPFilter, 1000 rules (rte_acl), 100k flows, memory-fed" 20 "io acl" "$T100K" 131072 standalone "$FILTER_R" "$T100K"
