#!/usr/bin/env bash
# Agent benchmarks (make agent-bench): one core, 64-byte frames, each figure measured against its baseline in
# the same run, rounds interleaved (metron, baseline, metron, ...) and medians reported, because this machine's
# noise is 10-20% and correlated in time. Writes bench/results/agent_*.json.
#
# Throughput is reported per CPU-second of the worker (packets / CPU time of the polling process between start
# and stop): on a shared machine a busy-polling worker does not always get its core, and what one core sustains
# when it does is the comparable number. Wall-clock Mpps is kept in each JSON as wall_value/baseline_wall_value.
#
# usage: run.sh BUILD_DIR RESULTS_DIR     env: AGENT_BENCH_SECONDS (3), AGENT_BENCH_ROUNDS (3), METRON_EAL_MEMORY_MB
# (the DPDK memory of the bench binaries that start their own EAL: by default 512 MB, the state benches size theirs
# for the tables they hold, state_bench.sh)
set -euo pipefail
BUILD=$(realpath "$1")
RESULTS=$(realpath "$2")
HERE=$(dirname "$(realpath "$0")")
ROOT=$(realpath "$HERE/../..")
# shellcheck source=common.sh
source "$HERE/common.sh"

# ---- inputs (fixed seeds: same traffic every run) ---------------------------------------------------------------
[[ -f $DATA/rules1000.txt ]] || $PY "$HERE/gen_traffic.py" rules 1000 "$DATA/rules1000.txt"
[[ -f $DATA/flows10k.pcap ]] || $PY "$HERE/gen_traffic.py" pcap 100000 10000 "$DATA/flows10k.pcap"
[[ -f $DATA/flows100k.pcap ]] || $PY "$HERE/gen_traffic.py" pcap 100000 100000 "$DATA/flows100k.pcap"
[[ -f $DATA/rules1000_v6.txt ]] || $PY "$HERE/gen_traffic.py" rules6 1000 "$DATA/rules1000_v6.txt"
[[ -f $DATA/flows10k_v6.pcap ]] || $PY "$HERE/gen_traffic.py" pcap6 100000 10000 "$DATA/flows10k_v6.pcap"
# The fw1000 chain's classifying group as synthesized for a switch that classifies nothing (target NONE): its
# `sw :: IPClassifier` holds all 1,205 entries (IPv4 and IPv6, ports, ttl, icmp types, tcp flags, fragments), fed
# the 20,000 packets the synthesizer aims at its boundaries (28% IPv6). Generated each run from the corpus, so
# the row follows the synthesizer.
rm -rf "$DATA/fw1000-none"
"$ROOT/synthesizer/bin/metron-synth" "$ROOT/synthesizer/corpus/fw1000.json" --target NONE -o "$DATA/fw1000-none" \
  --classifier-vectors 20000 --seed 7 >/dev/null
$PY "$HERE/classifier_vectors.py" "$DATA/fw1000-none" sw "$DATA/fw1000_sw.click" "$DATA/fw1000_sw_linear.click" \
  "$DATA/fw1000_sw.pcap"
configs
RULES6=$(cat "$DATA/rules1000_v6.txt")
FILTER6=$(cfg filter6 "src :: FromDevice(net_pcap0) -> Strip(14) -> CheckIPHeader -> IPFilter($RULES6) -> Unstrip(14) -> ToDevice(net_null0);")
FILTER6_LINEAR=$(cfg filter6_linear "src :: FromDevice(net_pcap0) -> Strip(14) -> CheckIPHeader -> IPFilter($RULES6, COMPILE false) -> Unstrip(14) -> ToDevice(net_null0);")

# metron CLICK [INPUT]: prints "mpps_cpu mpps_wall cycles_per_packet". INPUT: a pcap for the pcap vdev
# (net_pcap0), replay:PCAP for the memory-fed port (replay0, agent/src/drivers/replay_port.h), none: two net_null
# ports. Runs on the EAL arguments in $EAL (hugepages when reserved; nohuge below swaps in EAL_NOHUGE).
agent_run() {  # CLICK [INPUT] [FLAGS]: the agent's exit report
  local click=$1 pcap=${2:-} vdevs=() extra=() out
  if [[ $pcap == replay:* ]]; then extra=(--replay "replay0=${pcap#replay:}"); vdevs=(--vdev net_null0)
  elif [[ -n $pcap ]]; then vdevs=(--vdev "net_pcap0,rx_pcap=$pcap,infinite_rx=1" --vdev net_null0)
  else vdevs=(--vdev net_null0,size=64 --vdev net_null1,size=64); fi
  # shellcheck disable=SC2086
  out=$("$AGENT" ${3:-} --duration "$SECS" --mbufs 131071 "${extra[@]}" --dpdk -l 0 "${EAL[@]}" --file-prefix "mb$$" "${vdevs[@]}" -- "$click" 2>&1) ||
    { echo "$out" >&2; return 1; }
  echo "$out"
}
metron() {
  agent_run "$@" | awk '/^(src|a|b)\.count /{n+=$2} /^cpu_seconds /{c=$2} /^elapsed /{e=$2} /busy_cycles /{y=$2}
       END{printf "%.3f %.3f %.1f\n", n/c/1e6, n/e/1e6, y/n*c/e}'
}
# rx_cycles CLICK INPUT: "rx total" CPU cycles per packet from --profile (rx: the source element and the worker
# loop, as perf.sh's stages; scaled by CPU time over wall time like perf.sh)
rx_cycles() {
  agent_run "$1" "$2" --profile | awk '/^src\.count /{n=$2} /^cpu_seconds /{c=$2} /^elapsed /{e=$2}
    /^profile\./{s = substr($1, 9); t += $2; if (s == "loop" || s == "src") rx += $2}
    END{k = c / e / n; printf "%.1f %.1f\n", rx * k, t * k}'
}

# testpmd io-fwd between two net_null ports, same shape as $FWD: prints "mpps_cpu mpps_wall"
testpmd() {
  local fifo=$DATA/testpmd.in log=$DATA/testpmd.out pid c0 c1 t0 t1 n
  rm -f "$fifo"; mkfifo "$fifo"
  dpdk-testpmd -l 0-1 "${EAL[@]}" --file-prefix "tp$$" --vdev net_null0,size=64 --vdev net_null1,size=64 -- \
    -i --forward-mode=io --nb-cores=1 --total-num-mbufs=32768 <"$fifo" >"$log" 2>&1 &
  pid=$!
  exec 3>"$fifo"
  for _ in $(seq 100); do grep -q "testpmd>" "$log" 2>/dev/null && break; sleep 0.1; done
  cpu() { awk '{print $14+$15}' "/proc/$pid/stat"; }
  echo start >&3; t0=$(date +%s.%N); c0=$(cpu)
  sleep "$SECS"
  c1=$(cpu); t1=$(date +%s.%N); echo stop >&3
  sleep 1; echo quit >&3; exec 3>&-
  wait "$pid" || true
  rm -rf "/var/run/dpdk/tp$$"  # testpmd leaves its EAL runtime directory behind
  n=$(grep -A1 "Accumulated forward statistics" "$log" | sed -n 's/.*RX-packets: *\([0-9]*\).*/\1/p')
  awk -v n="$n" -v c0="$c0" -v c1="$c1" -v t0="$t0" -v t1="$t1" -v hz="$(getconf CLK_TCK)" \
    'BEGIN{printf "%.3f %.3f\n", n/((c1-c0)/hz)/1e6, n/(t1-t0)/1e6}'
}


# nohuge COMMAND...: COMMAND with the EAL on --no-huge memory (metron reads $EAL)
nohuge() { local EAL=("${EAL_NOHUGE[@]}"); "$@"; }

# compare NAME DESCRIPTION BASELINE_NAME "metron args" "baseline command": Metron and its baseline on hugepages
# and, in the same interleaved rounds, Metron on --no-huge memory: agent_NAME_hugepages is the hugepage figure
# against that --no-huge row (when hugepages could be reserved).
compare() {
  local name=$1 what=$2 bname=$3 mcmd=$4 bcmd=$5 m=() b=() n=()
  for _ in $(seq "$ROUNDS"); do
    m+=("$(eval "$mcmd")"); b+=("$(eval "$bcmd")")
    if (( HUGE )); then n+=("$(eval "nohuge $mcmd")"); fi
  done
  if (( HUGE )); then
    local nv nw hv hw
    nv=$(printf '%s\n' "${n[@]}" | awk '{print $1}' | median); nw=$(printf '%s\n' "${n[@]}" | awk '{print $2}' | median)
    hv=$(printf '%s\n' "${m[@]}" | awk '{print $1}' | median); hw=$(printf '%s\n' "${m[@]}" | awk '{print $2}' | median)
    write "agent_${name}_hugepages" "$what: 2 MB hugepages against --no-huge, same binary, same run (Mpps per CPU-second)" \
      "$hv" Mpps "same run on --no-huge memory" "$nv" "\"wall_value\": $hw, \"baseline_wall_value\": $nw, \"baseline_machine\": \"$MACHINE_NOHUGE\""
  fi
  local mv mw mc bv bw bc
  mv=$(printf '%s\n' "${m[@]}" | awk '{print $1}' | median); mw=$(printf '%s\n' "${m[@]}" | awk '{print $2}' | median)
  mc=$(printf '%s\n' "${m[@]}" | awk '{print $3}' | median)
  bv=$(printf '%s\n' "${b[@]}" | awk '{print $1}' | median); bw=$(printf '%s\n' "${b[@]}" | awk '{print $2}' | median)
  bc=$(printf '%s\n' "${b[@]}" | awk '{print $3}' | median)
  write "agent_$name" "$what" "$mv" Mpps "$bname" "$bv" "\"wall_value\": $mw, \"baseline_wall_value\": $bw"
  [[ -n $mc && $mc != "" ]] && [[ -n $bc ]] && write "agent_${name}_cycles" "$what, CPU cycles per packet" "$mc" cyc/pkt "$bname" "$bc" ""
  return 0
}


compare forwarding "FromDevice->ToDevice between two net_null ports, 64 B" "dpdk-testpmd io-fwd" \
  "metron $FWD | cut -d' ' -f1,2" "testpmd"
compare ipfilter1000 "IPFilter, 1000 rules (rte_acl), pcap trace of 10k flows" "same rules, linear first-match" \
  "metron $FILTER $DATA/flows10k.pcap" "metron $FILTER_LINEAR $DATA/flows10k.pcap"
compare ipfilter1000_v6 "IPFilter, 1000 IPv6 rules (rte_acl, addresses as 4x32-bit fields), pcap of 10k IPv6/UDP flows, 62 B" \
  "same rules, linear first-match" "metron $FILTER6 $DATA/flows10k_v6.pcap" "metron $FILTER6_LINEAR $DATA/flows10k_v6.pcap"
compare fw1000_sw "fw1000 chain's synthesized software classifier (IPClassifier, 1,205 patterns, rte_acl), its 20k classifier vectors" \
  "same classifier, linear first-match" "metron $DATA/fw1000_sw.click $DATA/fw1000_sw.pcap" \
  "metron $DATA/fw1000_sw_linear.click $DATA/fw1000_sw.pcap"
compare napt_10k "NAPT (SynthRewriter), 10k flows" "I/O only, same trace" \
  "metron $NAPT $DATA/flows10k.pcap" "metron $IO $DATA/flows10k.pcap"
compare napt_100k "NAPT (SynthRewriter), 100k flows" "I/O only, same trace" \
  "metron $NAPT $DATA/flows100k.pcap" "metron $IO $DATA/flows100k.pcap"
compare chain_fw_napt_lb "FW(1000)->NAPT->LB as synthesized, 10k flows" "unsynthesized chain, linear FW" \
  "metron $CHAIN $DATA/flows10k.pcap" "metron $CHAIN_NAIVE $DATA/flows10k.pcap"

# Memory-fed port (--replay: the trace loaded once, fresh mbufs with the frames copied in, no device, and sent
# mbufs returned to the pool in one put; agent/src/drivers/replay_port.h) against the pcap vdev into net_null, same
# configurations, same 100k-flow trace: throughput, and the rx stage's cycles per packet (--profile) next to the
# whole graph's.
TRACE100K=$DATA/flows100k.pcap
REPLAY_NAPT=$(replay_cfg napt_replay "$NAPT")
REPLAY_FILTER=$(replay_cfg filter_replay "$FILTER")
REPLAY_IO=$(replay_cfg io_replay "$IO")
compare io_100k_replay "I/O only, memory-fed port (--replay, in and out), 100k-flow trace" "same, pcap vdev into net_null" \
  "metron $REPLAY_IO replay:$TRACE100K" "metron $IO $TRACE100K"
compare napt_100k_replay "NAPT (SynthRewriter), 100k flows, memory-fed port (--replay)" "same NAPT, pcap vdev into net_null" \
  "metron $REPLAY_NAPT replay:$TRACE100K" "metron $NAPT $TRACE100K"
compare ipfilter1000_100k_replay "IPFilter, 1000 rules (rte_acl), 100k flows, memory-fed port (--replay)" \
  "same IPFilter, pcap vdev into net_null" "metron $REPLAY_FILTER replay:$TRACE100K" "metron $FILTER $TRACE100K"
# The offloaded chain's agent side (group_dispatch_bench): frames tagged by the switch, dispatched by tag to 4
# groups on one core, each running NAPT->LB as synthesized (one SynthRewriter) with its group counters, against
# the same NAPT->LB as one standalone graph on the untagged trace: what tag dispatch and the group runtime cost.
REPLAY_NAPT_LB=$(cfg napt_lb_replay "src :: FromDevice(replay0) -> Strip(14) -> CheckIPHeader -> SynthRewriter($LB, SELECT maglev, CAPACITY 262144) -> DecIPTTL -> Unstrip(14) -> ToDevice(replay0);")
groups4() { group_run "$BUILD/group_dispatch_bench" 4 "$TRACE100K"; }  # GROUP_NAPT_LB per group (common.sh)
compare offloaded_napt_lb_4groups "Offloaded chain's agent side: tagged frames dispatched by tag to 4 groups on one core, NAPT->LB per group, 100k flows, memory-fed" \
  "same NAPT->LB, one standalone graph, untagged" "groups4" "metron $REPLAY_NAPT_LB replay:$TRACE100K"
# The same offloaded chain with its tags dispatched to 2 worker cores against 1, same run, and this machine's
# two-CPU ceiling for that work (issue 22 item 6; its own script, two_cores_bench.sh).
"$HERE/two_cores_bench.sh" "$BUILD" "$RESULTS"
# Issue 22's targets, a row each: the workload against the DPDK library calls it makes alone, same trace, same run,
# with its stages and what stands in the way of the target (its own script, targets_bench.sh).
"$HERE/targets_bench.sh" "$BUILD" "$RESULTS"
# Latency through the dispatcher with the group hold on and off (its own script, hold_latency_bench.sh).
"$HERE/hold_latency_bench.sh" "$BUILD" "$RESULTS"
for w in napt ipfilter1000; do
  if [[ $w == napt ]]; then rc=$REPLAY_NAPT pc=$NAPT; else rc=$REPLAY_FILTER pc=$FILTER; fi
  r=() p=()
  for _ in $(seq "$ROUNDS"); do r+=("$(rx_cycles "$rc" "replay:$TRACE100K")"); p+=("$(rx_cycles "$pc" "$TRACE100K")"); done
  rr=$(printf '%s\n' "${r[@]}" | awk '{print $1}' | median); rt=$(printf '%s\n' "${r[@]}" | awk '{print $2}' | median)
  pr=$(printf '%s\n' "${p[@]}" | awk '{print $1}' | median); pt=$(printf '%s\n' "${p[@]}" | awk '{print $2}' | median)
  write "agent_${w}_100k_replay_rx_cycles" "$w, 100k flows: CPU cycles per packet of the rx stage (source element + worker loop, --profile), memory-fed input" \
    "$rr" cyc/pkt "pcap vdev input, same config" "$pr" "\"total_cycles\": $rt, \"baseline_total_cycles\": $pt"
done

FANOUT_SECS=1.5
if [[ ${BENCH_SMOKE:-0} == 1 ]]; then FANOUT_SECS=0.3; fi
# Resident memory of a one-core agent process with 1M NAPT flows (the agent's default EAL memory and packet
# pool), against the same flows in a full-width table (a pattern that keeps addresses may meet IPv6 flows; every
# table had that layout before the compact IPv4 one).
mem() { result "$BUILD/napt_memory_bench" "$FLOWS_1M" "$1" "$2" | awk '{print $1, $2, $3, $4}'; }
read -r rss base cyc peak < <(mem v4 declared)
read -r rss_any base_any cyc_any _ < <(mem any declared)
write agent_napt_1m_flows_rss "Resident memory of the whole one-core agent process holding 1M NAPT flows, CAPACITY 1048576 (target <= 256 MB)" \
  "$rss" MB "same flows, full-width IPv6-capable table" "$rss_any" \
  "\"target_mb\": 256, \"process_rss_before_mb\": $base, \"growth_mb\": $(awk -v a="$rss" -v b="$base" 'BEGIN{printf "%.1f", a-b}'), \"insert_cycles_per_flow\": $cyc, \"baseline_insert_cycles_per_flow\": $cyc_any"
# The same flows in a table without a declared capacity (Click's default: it grows by rehashing, off the packet
# path); each large hash a growth retires lived in a DPDK heap of its own and goes back to the OS (hash_heap.h).
read -r rss_grow base_grow cyc_grow peak_grow < <(mem v4 grow)
write agent_napt_1m_flows_grown_rss "Resident memory of the one-core agent process holding 1M NAPT flows in a table grown from empty (no CAPACITY), --no-huge (target <= 256 MB)" \
  "$rss_grow" MB "same flows, CAPACITY 1048576 declared" "$rss" \
  "\"target_mb\": 256, \"process_rss_before_mb\": $base_grow, \"peak_rss_mb\": $peak_grow, \"baseline_peak_rss_mb\": $peak, \"insert_cycles_per_flow\": $cyc_grow, \"baseline_insert_cycles_per_flow\": $cyc"

# Flow state at 1M flows: save/restore across a restart and how long a copy holds the core (its own script,
# state_bench.sh).
"$HERE/state_bench.sh" "$BUILD" "$RESULTS"

# DPI across TCP segments: stream vs block mode, 100k flows (its own script, dpi_bench.sh).
"$HERE/dpi_bench.sh" "$BUILD" "$RESULTS"

# Chains of 1, 2, 3, 6 black-box NFs on zero-copy rings (issue 24; its own script, blackbox_chain_bench.sh).
"$HERE/blackbox_chain_bench.sh" "$BUILD" "$RESULTS"

# Dispatch and control benchmarks: their own binaries, each writing its JSON with its baseline measured in the
# same run (kernel tag dispatch vs net_af_packet; DeployPipeline into a running agent vs a DPDK process per chain).
"$BUILD/src/dispatch/fanout_dispatch_bench" "$RESULTS" "$FANOUT_SECS"
"$BUILD/src/control/control_deploy_bench" "$RESULTS" "$AGENT"

# Packets per core (issue 16): A/B against a previous build when AGENT_BASE / AGENT_BASE_PROFILED name one.
"$HERE/perf.sh" "$BUILD" "$RESULTS"
# The hot path against a previous build (issue 25): HOTPATH_BASE names a directory holding its metron-agent and
# group_dispatch_bench.
if [[ -n ${HOTPATH_BASE:-} ]]; then "$HERE/hotpath_ab.sh" "$BUILD" "$HOTPATH_BASE" "$RESULTS"; fi
