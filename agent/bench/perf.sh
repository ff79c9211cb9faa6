#!/usr/bin/env bash
# Packets per core (issue 16): one lcore, 64 B frames, 100k flows, in-memory pcap vdev in, net_null out.
#   - throughput of forwarding, IPFilter(1000), NAPT and FW(1000)->NAPT->LB as synthesized, each A/B against a
#     previous build of the agent (AGENT_BASE) in the same run, rounds interleaved, medians; wall-clock Mpps
#     (the issue's figure) with the per-CPU-second rate next to it;
#   - where the chain's time goes: CPU cycles per packet per stage (rx, parse, classify, lookup, rewrite, tx) from
#     `metron-agent --profile`, A/B against AGENT_BASE_PROFILED (a previous build that has --profile), and the
#     DPDK library calls alone (datapath_ceiling_bench: rte_acl classify of the same rules, rte_hash bulk lookup
#     of the same keys) as the ceiling of the classify and lookup stages.
# usage: perf.sh BUILD_DIR RESULTS_DIR   env: AGENT_BASE, AGENT_BASE_PROFILED (rows needing them are skipped when
#        unset), AGENT_BENCH_SECONDS (3), AGENT_BENCH_ROUNDS (3)
set -euo pipefail
BUILD=$(realpath "$1")
RESULTS=$(realpath "$2")
HERE=$(dirname "$(realpath "$0")")
# shellcheck source=common.sh
source "$HERE/common.sh"
BASE=${AGENT_BASE:-}
BASE_PROF=${AGENT_BASE_PROFILED:-}
[[ -f $DATA/rules1000.txt ]] || $PY "$HERE/gen_traffic.py" rules 1000 "$DATA/rules1000.txt"
[[ -f $DATA/flows100k.pcap ]] || $PY "$HERE/gen_traffic.py" pcap 100000 100000 "$DATA/flows100k.pcap"
TRACE1M=$DATA/flows1m.pcap
if [[ ${BENCH_SMOKE:-0} == 1 ]]; then TRACE1M=$DATA/flows100k.pcap  # a smoke run does not build the 1M trace
else [[ -f $TRACE1M ]] || $PY "$HERE/gen_traffic.py" pcap 1000000 1000000 "$TRACE1M"; fi
[[ -f $DATA/rss1.pcap ]] || $PY "$HERE/gen_traffic.py" split "$DATA/flows100k.pcap" "$DATA/rss0.pcap" "$DATA/rss1.pcap"
TRACE=$DATA/flows100k.pcap
configs

# run AGENT CLICK [pcap[,pcap]] [--profile] [LCORES]: the agent's exit report; with two traces the pcap vdev
# has two rx queues, one per worker core (RSS mode: each flow on one queue)
run() {
  local agent=$1 click=$2 pcap=${3:-} vdevs
  if [[ -n $pcap ]]; then vdevs=(--vdev "net_pcap0,rx_pcap=${pcap//,/,rx_pcap=},infinite_rx=1" --vdev net_null0)
  else vdevs=(--vdev net_null0,size=64 --vdev net_null1,size=64); fi
  # shellcheck disable=SC2086
  "$agent" ${4:-} --duration "$SECS" --mbufs 196607 --dpdk -l "${5:-0}" "${EAL[@]}" --file-prefix "mp$$" "${vdevs[@]}" -- "$click" 2>&1
}
# rate AGENT CLICK [pcap] [flags] [LCORES]: "mpps_wall mpps_cpu" (every core's sources)
rate() {
  run "$@" | awk '/(^|\.)(src|a|b)\.count /{n+=$2} /^cpu_seconds /{c=$2} /^elapsed /{e=$2} END{printf "%.3f %.3f\n", n/e/1e6, n/c/1e6}'
}
# stages AGENT CLICK PCAP: CPU cycles per packet "rx parse classify lookup rewrite tx total" (rdtsc per batch
# stage, scaled by the worker's CPU time over wall time: the machine is shared and the clock runs while it waits)
stages() {
  run "$1" "$2" "$3" --profile | awk '
    /^src\.count /{n=$2} /^cpu_seconds /{c=$2} /^elapsed /{e=$2}
    /^profile\./{ s=substr($1, 9); v=$2
      if (s == "loop" || s == "src") st["rx"] += v
      else if (s ~ /^(Strip|CheckIPHeader)@/ || s ~ /\.keys$/) st["parse"] += v
      else if (s ~ /^IPFilter@/) st["classify"] += v
      else if (s ~ /\.lookup$/) st["lookup"] += v
      else if (s ~ /^(SynthRewriter|IPRewriter|DecIPTTL)@/) st["rewrite"] += v
      else st["tx"] += v }
    END{ k = c / e / n; t = 0
      split("rx parse classify lookup rewrite tx", o, " ")
      for (i = 1; i <= 6; ++i) { printf "%.1f ", st[o[i]] * k; t += st[o[i]] * k }
      printf "%.1f\n", t }'
}

# ab NAME DESCRIPTION CLICK [pcap]: throughput of this build against AGENT_BASE, interleaved rounds
ab() {
  local name=$1 what=$2 m=() b=()
  [[ -n $BASE ]] || { echo "bench: $name skipped (no AGENT_BASE)"; return 0; }
  for _ in $(seq "$ROUNDS"); do m+=("$(rate "$AGENT" "${@:3}")"); b+=("$(rate "$BASE" "${@:3}")"); done
  local mw mc bw bc
  mw=$(col 1 "${m[@]}"); mc=$(col 2 "${m[@]}"); bw=$(col 1 "${b[@]}"); bc=$(col 2 "${b[@]}")
  write "agent_perf_$name" "$what (wall-clock Mpps, one lcore, median of $ROUNDS interleaved rounds)" "$mw" Mpps \
    "previous build ($(basename "$BASE"))" "$bw" "\"cpu_value\": $mc, \"baseline_cpu_value\": $bc, \"rounds\": \"$(echo "${m[*]}" | tr -s ' ' ',') / $(echo "${b[*]}" | tr -s ' ' ',')\""
}
col() { local k=$1; shift; printf '%s\n' "$@" | awk -v k="$k" '{print $k}' | median; }

ab forwarding "FromDevice->ToDevice between two net_null ports" "$FWD"
ab ipfilter1000 "IPFilter, 1000 rules, 100k flows" "$FILTER" "$TRACE"
ab napt_100k "NAPT (SynthRewriter), 100k flows" "$NAPT" "$TRACE"
ab chain_100k "FW(1000)->NAPT->LB as synthesized, 100k flows" "$CHAIN" "$TRACE"

# Per-stage cycles of the synthesized chain, this build against the previous profiled one, and the ceiling.
if [[ -n $BASE_PROF ]]; then
  m=() b=() c=()
  for _ in $(seq "$ROUNDS"); do
    m+=("$(stages "$AGENT" "$CHAIN" "$TRACE")"); b+=("$(stages "$BASE_PROF" "$CHAIN" "$TRACE")")
    c+=("$("${HUGE_ENV[@]}" "$BUILD/datapath_ceiling_bench" "$DATA/rules1000.txt" "$TRACE" 262144 "$SECS" 2>/dev/null | awk '/^result/{print $2, $3}')")
  done
  i=0
  for stage in rx parse classify lookup rewrite tx total; do
    i=$((i + 1))
    write "agent_chain_stage_${stage}_cycles" "FW(1000)->NAPT->LB synthesized, 100k flows: CPU cycles per packet in stage '$stage' (--profile, median of $ROUNDS)" \
      "$(col $i "${m[@]}")" cyc/pkt "previous build ($(basename "$BASE_PROF"))" "$(col $i "${b[@]}")" ""
  done
  write agent_chain_classify_vs_ceiling "Chain's classify stage (CPU cycles per packet) against rte_acl_classify alone on the same 1000 rules and keys" \
    "$(col 3 "${m[@]}")" cyc/pkt "rte_acl alone (datapath_ceiling_bench)" "$(col 1 "${c[@]}")" ""
  write agent_chain_lookup_vs_ceiling "Chain's flow lookup stage (CPU cycles per packet) against rte_hash_lookup_bulk_data alone on the same keys, same table size" \
    "$(col 4 "${m[@]}")" cyc/pkt "rte_hash bulk lookup alone (datapath_ceiling_bench)" "$(col 2 "${c[@]}")" ""
fi

# Two worker cores (RSS mode: the trace's flows split over two rx queues, each core its own graph and flow table)
# against one core with the whole trace, same build, interleaved. On this 2-CPU machine shared with other work the
# wall ratio is bounded by the CPU the two workers get; the per-CPU-second ratio shows what the second core costs.
m=() b=()
for _ in $(seq "$ROUNDS"); do
  m+=("$(rate "$AGENT" "$CHAIN" "$DATA/rss0.pcap,$DATA/rss1.pcap" "" 0-1)"); b+=("$(rate "$AGENT" "$CHAIN" "$TRACE")")
done
write agent_chain_2cores "FW(1000)->NAPT->LB synthesized, 100k flows, 2 worker cores (RSS: flows split over 2 rx queues), wall-clock Mpps" \
  "$(col 1 "${m[@]}")" Mpps "1 worker core, same build, same run" "$(col 1 "${b[@]}")" \
  "\"cpu_value\": $(col 2 "${m[@]}"), \"baseline_cpu_value\": $(col 2 "${b[@]}"), \"load_average\": \"$(cut -d' ' -f1-3 /proc/loadavg)\""

# Latency through the chain (rx timestamp -> tx) at 10%, 50% and 90% of the core's maximum rate, measured in the
# same process just before (chain_latency_bench: open-loop arrivals into a 1024-descriptor ring). p99 rows carry the
# p50 at the same load as their baseline.
GROUP_CHAIN=$(cfg chain_group "input -> Strip(14) -> CheckIPHeader -> IPFilter($RULES) -> SynthRewriter($LB, SELECT maglev, CAPACITY 262144) -> DecIPTTL -> Unstrip(14) -> [0]output;")
lat=()
for _ in $(seq "$ROUNDS"); do lat+=("$("${HUGE_ENV[@]}" "$BUILD/chain_latency_bench" "$GROUP_CHAIN" "$TRACE" "$SECS" 0.1 0.5 0.9 2>/dev/null | tr '\n' ' ')"); done
for pct in 10 50 90; do
  rows=() ; for r in "${lat[@]}"; do rows+=("$(awk -v l="0.$((pct / 10))0" '{for (i = 1; i <= NF; ++i) if ($i == "load" && $(i + 1) == l) print $(i + 2), $(i + 3), $(i + 4), $(i + 5)}' <<<"$r")"); done
  p50=$(col 2 "${rows[@]}"); p99=$(col 3 "${rows[@]}")
  extra="\"offered_mpps\": $(col 1 "${rows[@]}"), \"max_mpps_wall\": $(printf '%s\n' "${lat[@]}" | awk '{print $2}' | median), \"dropped\": $(col 4 "${rows[@]}")"
  write "agent_chain_latency_p50_${pct}pct" "FW(1000)->NAPT->LB synthesized, 100k flows: median latency rx -> tx at ${pct}% of the core's maximum rate" \
    "$p50" us "p50 at 10% load" "$(for r in "${lat[@]}"; do awk '{for (i = 1; i <= NF; ++i) if ($i == "load" && $(i + 1) == "0.10") print $(i + 3)}' <<<"$r"; done | median)" "$extra"
  write "agent_chain_latency_p99_${pct}pct" "FW(1000)->NAPT->LB synthesized, 100k flows: 99th percentile latency rx -> tx at ${pct}% of the core's maximum rate" \
    "$p99" us "p50 at the same load" "$p50" "$extra"
done

# 1M flows: the chain fed from memory by chain_latency_bench (closed loop, every flow in the table first), against
# the same bench on the 100k-flow trace in the same run (the pcap vdev would need an mbuf per frame of a 1M trace).
# One NAPT address maps at most 64,512 flows per backend (4 x 64,512 < 1M): the NAPT side has 16 addresses here,
# each pattern one address towards one backend (64 patterns, Maglev over them).
LB1M=$(for a in $(seq 1 16); do for b in 10 11 12 13; do printf 'PATTERN 5.5.5.%s 1024-65535 10.0.0.%s 80, ' "$a" "$b"; done; done)
GROUP_CHAIN_1M=$(cfg chain_group_1m "input -> Strip(14) -> CheckIPHeader -> IPFilter($RULES) -> SynthRewriter(${LB1M}SELECT maglev, CAPACITY 1048576) -> DecIPTTL -> Unstrip(14) -> [0]output;")
m=() b=()
for _ in $(seq "$ROUNDS"); do
  m+=("$("${HUGE_ENV[@]}" "$BUILD/chain_latency_bench" "$GROUP_CHAIN_1M" "$TRACE1M" "$SECS" 2>/dev/null | awk '/^max/{print $2, $3}')")
  b+=("$("${HUGE_ENV[@]}" "$BUILD/chain_latency_bench" "$GROUP_CHAIN" "$TRACE" "$SECS" 2>/dev/null | awk '/^max/{print $2, $3}')")
done
write agent_chain_1m_flows "FW(1000)->NAPT->LB synthesized, 1M flows (CAPACITY 1048576, 16 NAPT addresses x 4 backends), closed loop from memory, wall-clock Mpps" \
  "$(col 1 "${m[@]}")" Mpps "same bench, 100k-flow trace" "$(col 1 "${b[@]}")" \
  "\"cpu_value\": $(col 2 "${m[@]}"), \"baseline_cpu_value\": $(col 2 "${b[@]}")"
