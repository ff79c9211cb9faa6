#!/usr/bin/env bash
# Chains of 1, 2, 3 and 6 black-box NFs in RING (via the agent and direct) and MEMIF mode (issue 24, OpenNetVM's chain-length table): the standalone
# agent reads 64-byte frames from net_null0, hands them through N BlackBoxNF elements, each a metron-nf-fwd
# process (agent/nflib) on its own pair of rte_rings, and sends what comes back to net_null1. Chain 0 (FromDevice
# -> ToDevice) is the baseline. Rounds interleaved (0, then 1, 2, 3, 6 per mode, again), medians reported.
#
# Pinning (2 CPUs on this machine): the agent's worker is lcore 0 on CPU 0; every NF runs on CPU 1 (CPUS 1), so a
# chain of 6 shares CPU 1 between six processes (by default each sleeps when its ring stays empty, IDLE WAKE, and
# its producer wakes it). Cycles:
#   agent per hop = the BlackBoxNF elements' own cycles (--profile run) per packet handed to an NF
#   NF per packet = the NFs' busy cycles (metron_nf_busy_cycles: non-empty rx to the end of its tx) per packet
#   hop           = the two: a ring hop on both sides, metron-nf-fwd's own (trivial) verdict loop included
# Rings (RING_SIZE 32768) larger than the pool (32767 mbufs): with every mbuf in flight the agent reads no more
# (a closed loop) instead of freeing what a full first ring refuses, and an NF waiting for its turn on the shared
# CPU finds its input queued. CPU shares (CPU seconds / elapsed) are in each row: on a loaded machine they, not
# the ring, bound the throughput.
# RING is LINK AGENT: every hop goes back through the agent (it takes each packet back from one NF and hands it to the
# next). DIRECT is LINK DIRECT (the default): NF i writes into NF i+1's input ring, the agent only feeds the first and
# reads the last; its per-hop cycles are the elements' own cycles divided over all hops. Both with the default IDLE
# WAKE (an NF whose input stayed empty for IDLE_SPIN sleeps; whoever enqueues for it wakes it, a system call only
# when it sleeps; SCHED BATCH: a woken NF does not preempt the one running, so NFs sharing a CPU take turns with
# whole ring-fulls; NFs sharing a CPU, as here, poll no time before they sleep and the agent wakes the first once per
# 2048 packets or when it goes idle: WAKE_BATCH, docs/blackbox.md). RING_POLL, DIRECT_POLL: the same with the NFs busy polling (IDLE POLL); DIRECT_YIELD: IDLE
# YIELD (poll, sched_yield after 256 empty polls: the default before IDLE WAKE). A "wake-up" is a producer's futex
# wake; its system call is inside the producer's cycles (the element's for the agent, the NF's busy cycles for an NF).
# BB_PERF=DIR: each throughput run also under `perf record -e cpu-clock -a -g` (DIR/MODE_N.data; perf report --sort
# comm,sym shows where each CPU's time went).
# BB_EXTRA: more BlackBoxNF keywords for every RING box (e.g. "SCHED NORMAL" or "IDLE_SPIN 5"), to compare settings.
# Mpps per CPU-second: packets delivered over the CPU seconds of the agent and all NFs together (the machine's cost).
# MEMIF: the same chains with MODE MEMIF: each NF a DPDK process of its own (--no-huge) on a net_memif client of
# the element's memif server port, a copy each way; memif's own rings (1024 slots) refuse what does not fit (counted
# as ring_full, dropped: CLOSED), so there the agent also reads and frees packets the first NF had no room for.
# KERNEL: the same chains with MODE KERNEL: each NF a network namespace of its own whose bridge forwards every frame
# (PROGRAM /bin/true: no rules; the kernel's own forwarding is the NF), two af_packet ports and two veths per hop, a
# copy each way. There is no NF process: the kernel's work runs mostly inside the agent's send (sendto on the
# af_packet socket delivers through the veth, bridge and the other veth in the same system call), so it is in the
# element's cycles; what the kernel defers to ksoftirqd is not, and the CPU shares show it.
# IDLE: six NFs fed by a port that never receives, for SECS: their CPU seconds per second (IDLE WAKE, POLL, YIELD;
# BB_IDLES picks, empty for none).
# Writes bench/results/agent_blackbox_{,poll_,direct_,direct_poll_,direct_yield_,memif_,kernel_}chain_{1,2,3,6}.json,
# the same prefixes' _hop.json and _chain6_vs_chain1.json, and agent_blackbox_idle_{wake,poll,yield}.json (BB_MODES
# picks among RING, RING_POLL, DIRECT, DIRECT_POLL, DIRECT_YIELD, MEMIF and KERNEL, all by default; BB_CHAINS among
# 1 2 3 6). Called by run.sh;
# runs alone as: blackbox_chain_bench.sh BUILD_DIR RESULTS_DIR
set -euo pipefail
BUILD=$(realpath "$1")
RESULTS=$(realpath "$2")
HERE=$(dirname "$(realpath "$0")")
# shellcheck source=common.sh
source "$HERE/common.sh"
NF=${BB_NF:-$BUILD/metron-nf-fwd}  # BB_NF: another NF program (e.g. an older build, to compare)
# The NF's arguments: batches of up to 256 (METRON_NF_MAX_BURST; metron-nf-fwd's own default is 32). An NF that
# shares its CPU takes what accumulated while it waited for it, thousands of packets: 256 at a time halves its cycles
# per packet against 32 (BENCHMARKS.md, session 16). BB_NF_ARGS="" runs the NF's defaults.
NF_ARGS=${BB_NF_ARGS-"--burst 256"}
if (( ! HUGE )); then
  echo "blackbox_chain_bench: RING mode needs hugepages ($HUGE_STATE): skipped" >&2
  exit 0
fi
# DPDK multi-process: the NFs map the agent's hugepage files, so they are kept (no --huge-unlink); removed below.
HUGE_DIR=${HUGE_EAL[1]}
PREFIX="mbb$$"
# Rings larger than the pool: with every mbuf in flight the agent reads no more (closed loop) instead of
# refusing packets at a full ring, and an NF that waits for its turn on a shared CPU finds its input queued.
RING=${BB_RING_SIZE:-32768}
MBUFS=${BB_MBUFS:-32767}
EAL_MP=(--huge-dir "$HUGE_DIR" -m 512 --no-pci --log-level lib.eal:error --log-level pmd:error)
cleanup_bb() { rm -f "$HUGE_DIR/${PREFIX}map_"* 2>/dev/null || true; rm -rf "/var/run/dpdk/$PREFIX"; }
trap 'cleanup_bb; hugepages_release' EXIT

chain_cfg() {  # N MODE: the Click file of a chain of N black boxes
  local n=$1 mode=${2:-RING} c="src :: FromDevice(net_null0)" k
  for (( k = 1; k <= n; k++ )); do
    if [[ $mode == KERNEL ]]; then
      # net_null's frames have a zero source MAC, which a Linux bridge drops: unicast MACs once, before the first box
      (( k == 1 )) && c+=" -> EtherRewrite(02:00:00:00:00:01, 02:00:00:00:00:02)"
      c+=" -> bb$k :: BlackBoxNF(NAME nf$k, PROGRAM /bin/true, MODE KERNEL, STALL_TIMEOUT 0)"
    else
      local how="MODE $mode"
      [[ $mode == RING ]] && how="MODE RING, LINK AGENT"
      [[ $mode == RING_POLL ]] && how="MODE RING, LINK AGENT, IDLE POLL"
      [[ $mode == DIRECT ]] && how="MODE RING, LINK DIRECT"
      [[ $mode == DIRECT_POLL ]] && how="MODE RING, LINK DIRECT, IDLE POLL"
      [[ $mode == DIRECT_YIELD ]] && how="MODE RING, LINK DIRECT, IDLE YIELD"
      [[ -n $NF_ARGS ]] && how+=", ARGS \"$NF_ARGS\""
      [[ $mode == RING* || $mode == DIRECT* ]] && [[ -n ${BB_EXTRA:-} ]] && how+=", $BB_EXTRA"
      c+=" -> bb$k :: BlackBoxNF(NAME nf$k, PROGRAM $NF, $how, CPUS 1, STALL_TIMEOUT 0, RING_SIZE $RING)"
    fi
  done
  cfg "bbchain${n}_$mode" "$c -> dst :: ToDevice(net_null1);"
}
# idle_cfg N MODE: N black boxes fed by a port that never receives (net_ring's own loopback ring, nothing sent on it)
idle_cfg() {
  local n=$1 c="src :: FromDevice(net_ring0)" k how="MODE RING, LINK DIRECT, IDLE $2"
  [[ -n ${BB_EXTRA:-} ]] && how+=", $BB_EXTRA"
  for (( k = 1; k <= n; k++ )); do
    c+=" -> bb$k :: BlackBoxNF(NAME nf$k, PROGRAM $NF, $how, CPUS 1, STALL_TIMEOUT 0, RING_SIZE $RING)"
  done
  cfg "bbidle${n}_$2" "$c -> dst :: ToDevice(net_null1);"
}
# idle_cpu N IDLE: CPU seconds per second of N NFs given no packets, and their sleeps per second
idle_cpu() {
  "$AGENT" --duration "$SECS" --idle-sleep 100 --mbufs 4095 --dpdk -l 0 "${EAL_MP[@]}" --file-prefix "$PREFIX" \
    --vdev net_ring0 --vdev net_null1,size=64 -- "$(idle_cfg "$1" "$2")" 2>&1 |
    awk '/^elapsed /{e=$2} /^bb[0-9]+\.nf_cpu_seconds /{nc+=$2} /^bb[0-9]+\.nf_sleeps /{sl+=$2}
      END{if (e == 0) {print "the idle agent did not run" > "/dev/stderr"; exit 1} printf "%.4f %.1f\n", nc / e, sl / e}'
}

# run N MODE [--profile]: the agent's exit report (with the NFs' exit lines: "metron-nf-fwd: rx N ... busy_cycles C")
run_chain() {
  local out perf=()
  # BB_PERF=DIR: the throughput runs under perf (cpu-clock samples of both CPUs, call graphs) into DIR/MODE_N.data
  [[ -n ${BB_PERF:-} && -z ${3:-} ]] && mkdir -p "$BB_PERF" && perf=(perf record -q -e cpu-clock -a -g -o "$BB_PERF/$2_$1.data" --)
  out=$("${perf[@]}" "$AGENT" ${3:-} --duration "$SECS" --mbufs "$MBUFS" --dpdk -l 0 "${EAL_MP[@]}" --file-prefix "$PREFIX" \
    --vdev net_null0,size=64 --vdev net_null1,size=64 -- "$(chain_cfg "$1" "$2")" 2>&1) || { echo "$out" >&2; return 1; }
  echo "$out"
}
# throughput N MODE: "mpps agent_cpu_share nf_cpu_share refused_share mpps_per_cpu_second wakeups_per_1000_packets"
throughput() {
  run_chain "$1" "$2" | awk '/^dst\.count /{d=$2} /^src\.count /{s=$2} /^elapsed /{e=$2} /^cpu_seconds /{c=$2}
    /^bb1\.ring_full /{rf=$2} /^bb[0-9]+\.nf_cpu_seconds /{nc+=$2} /^bb[0-9]+\.nf_wakeups /{w+=$2}
    END{if (d == 0) {print "no packets delivered" > "/dev/stderr"; exit 1}
        printf "%.3f %.2f %.2f %.4f %.3f %.3f\n", d / e / 1e6, c / e, nc / e, (s ? rf / s : 0), d / (c + nc) / 1e6, w * 1000 / d}'
}
# hop_cycles N MODE: "agent nf" cycles per packet per hop, from a --profile run: the agent's = the BlackBoxNF elements'
# own cycles (enqueue, dequeue, verdicts; their empty polls of the NF's ring included) per packet handed to an
# NF; the NF's = its busy cycles (metron_nf_busy_cycles: from a non-empty rx to the end of its tx) per packet.
hop_cycles() {  # KERNEL: no NF process, the NF's share is 0 (its work is in the agent's, see above)
  run_chain "$1" "$2" --profile | awk -v kernel=$([[ $2 == KERNEL ]] && echo 1 || echo 0) '/^bb[0-9]+\.sent /{h+=$2} /^profile\.bb[0-9]+ /{pc+=$2}
    /^metron-nf-fwd: /{for (i = 2; i < NF; i++) {if ($i == "busy_cycles") nb += $(i + 1); if ($i == "rx") nr += $(i + 1)}}
    END{if (h == 0 || (nr == 0 && !kernel)) {print "no packets through the NFs" > "/dev/stderr"; exit 1}
        printf "%.1f %.1f\n", pc / h, (nr ? nb / nr : 0)}'
}

CHAINS=(${BB_CHAINS:-1 2 3 6})
MODES=(${BB_MODES:-RING RING_POLL DIRECT DIRECT_POLL DIRECT_YIELD MEMIF KERNEL})
IDLES=(${BB_IDLES-WAKE POLL YIELD})
declare -A MPPS AGH NFH HOP RF ACPU NCPU R61 ONE PCPU WK R61C ONEC IDLE_CPU IDLE_SLEEPS
for (( r = 0; r < ROUNDS; r++ )); do
  for idle in "${IDLES[@]}"; do  # six NFs given nothing: what they cost idle
    read -r ic is < <(idle_cpu 6 "$idle")
    IDLE_CPU[$idle]+="$ic "; IDLE_SLEEPS[$idle]+="$is "
    echo "blackbox 6 idle NFs, IDLE $idle, round $r: $ic CPU seconds per second ($is sleeps per second)" >&2
  done
  read -r m ac nc q pc w < <(throughput 0 RING)
  MPPS[0]+="$m "
  echo "blackbox chain 0 round $r: $m Mpps (agent CPU share $ac)" >&2
  for mode in "${MODES[@]}"; do
    for n in "${CHAINS[@]}"; do
      k="$mode$n"
      read -r m ac nc q pc w < <(throughput "$n" "$mode")
      MPPS[$k]+="$m "; ACPU[$k]+="$ac "; NCPU[$k]+="$nc "; RF[$k]+="$q "; PCPU[$k]+="$pc "; WK[$k]+="$w "
      read -r ah nh < <(hop_cycles "$n" "$mode")
      AGH[$k]+="$ah "; NFH[$k]+="$nh "; HOP[$k]+="$(awk -v x="$ah" -v y="$nh" 'BEGIN{printf "%.1f", x + y}') "
      (( n == 1 )) && ONE[$mode]=$m && ONEC[$mode]=$pc
      (( n == 6 )) && R61[$mode]+="$(awk -v a="$m" -v b="${ONE[$mode]}" 'BEGIN{printf "%.3f", (b > 0 ? a / b : 0)}') "
      (( n == 6 )) && R61C[$mode]+="$(awk -v a="$pc" -v b="${ONEC[$mode]}" 'BEGIN{printf "%.3f", (b > 0 ? a / b : 0)}') "
      echo "blackbox $mode chain $n round $r: $m Mpps, $pc Mpps per CPU-second (CPU share: agent $ac, NFs $nc; refused at the first NF $q; $w wake-ups per 1000 packets); per hop: agent $ah + NF $nh cycles/packet" >&2
    done
  done
done
med() { tr ' ' '\n' <<<"$1" | grep -v '^$' | median; }
base_mpps=$(med "${MPPS[0]}")
LOAD=$(cut -d' ' -f1 /proc/loadavg)
PIN="agent worker lcore 0 on CPU 0, every NF on CPU 1 (CPUS 1); 2 CPUs shared with other work, load average $LOAD"
for idle in "${IDLES[@]}"; do
  [[ -n ${IDLE_CPU[$idle]// /} ]] || continue  # the idle runs failed (said above)
  lc=$(tr '[:upper:]' '[:lower:]' <<<"$idle")
  write "agent_blackbox_idle_${lc}" "Six metron-nf-fwd NFs given no packets (LINK DIRECT, IDLE $idle${BB_EXTRA:+, $BB_EXTRA}, all on CPU 1): their CPU seconds per second together, median over rounds (sleeps per second: $(med "${IDLE_SLEEPS[$idle]}"))" \
    "$(med "${IDLE_CPU[$idle]}")" "CPU-s/s" "one CPU" 1 ""
done
for mode in "${MODES[@]}"; do
  if [[ $mode == RING ]]; then pre=agent_blackbox; what="RING mode, LINK AGENT, IDLE WAKE: rte_rings to and from the agent at every hop, zero copy, NFs sleep when idle"
  elif [[ $mode == RING_POLL ]]; then pre=agent_blackbox_poll; what="RING mode, LINK AGENT, IDLE POLL: rte_rings to and from the agent at every hop, the NFs busy polling"
  elif [[ $mode == DIRECT ]]; then pre=agent_blackbox_direct; what="RING mode, LINK DIRECT, IDLE WAKE: NF-to-NF rte_rings, the agent feeds the first and reads the last, zero copy, NFs sleep when idle"
  elif [[ $mode == DIRECT_POLL ]]; then pre=agent_blackbox_direct_poll; what="RING mode, LINK DIRECT, IDLE POLL: NF-to-NF rte_rings, the NFs busy polling"
  elif [[ $mode == DIRECT_YIELD ]]; then pre=agent_blackbox_direct_yield; what="RING mode, LINK DIRECT, IDLE YIELD: NF-to-NF rte_rings, the NFs polling and yielding"
  elif [[ $mode == KERNEL ]]; then pre=agent_blackbox_kernel; what="KERNEL mode: a network namespace per NF, its bridge forwarding every frame, af_packet on veths, a copy each way"
  else pre=agent_blackbox_memif; what="MEMIF mode: net_memif, a copy each way, the NF a DPDK process of its own"; fi
  one_mpps=$(med "${MPPS[${mode}1]}")
  hops=""
  for n in "${CHAINS[@]}"; do
    k="$mode$n"
    m=$(med "${MPPS[$k]}"); ah=$(med "${AGH[$k]}"); nh=$(med "${NFH[$k]}"); hop=$(med "${HOP[$k]}"); q=$(med "${RF[$k]}")
    ac=$(med "${ACPU[$k]}"); nc=$(med "${NCPU[$k]}"); pc=$(med "${PCPU[$k]}"); w=$(med "${WK[$k]}")
    hops+="$hop "
    if (( n == 1 )); then bn="no black box (FromDevice -> ToDevice)"; bv=$base_mpps
    else bn="chain of 1, same cores"; bv=$one_mpps; fi
    write "${pre}_chain_$n" "Chain of $n black-box NFs (metron-nf-fwd, $what), 64 B frames; Mpps delivered (wall clock); $PIN" \
      "$m" Mpps "$bn" "$bv" \
      "\"nfs\": $n, \"mode\": \"$mode\", \"extra\": \"${BB_EXTRA:-}\", \"nf_args\": \"$NF_ARGS\", \"mpps_per_cpu_second\": $pc, \"wakeups_per_1000_packets\": $w, \"cycles_per_hop\": $hop, \"agent_cycles_per_hop\": $ah, \"nf_cycles_per_packet\": $nh, \"agent_cpu_share\": $ac, \"nfs_cpu_share\": $nc, \"refused_share_at_first_nf\": $q, \"ring_size\": $RING, \"mbufs\": $MBUFS, \"pinning\": \"$PIN\""
  done
  write "${pre}_hop" "Cycles per packet per black-box hop ($mode), both sides: the BlackBoxNF element's own cycles (--profile, its empty polls included) plus the NF's busy cycles (library rx/tx and metron-nf-fwd's verdict loop), median over chains of 1, 2, 3, 6 (per chain: $hops)" \
    "$(med "$hops")" cyc/pkt "goal (issue 24, ring hop)" 30 ""
  [[ -n ${R61[$mode]:-} ]] && write "${pre}_chain6_vs_chain1" "Chain of 6 over chain of 1 ($mode), the two measured in the same round on the same cores ($PIN), median over rounds (per round: ${R61[$mode]})" \
    "$(med "${R61[$mode]}")" ratio "goal (issue 24: chain of 6 >= 0.85x chain of 1)" 0.85 \
    "\"per_cpu_second_ratio\": $(med "${R61C[$mode]:-0}"), \"per_cpu_second_ratio_rounds\": \"${R61C[$mode]:-}\""
done
# Direct rings against rings via the agent, chain by chain, both measured in this run (medians of the rounds).
if [[ " ${MODES[*]} " == *" DIRECT "* && " ${MODES[*]} " == *" RING "* ]]; then
  for n in "${CHAINS[@]}"; do
    write "agent_blackbox_direct_vs_agent_chain_$n" "Chain of $n black-box NFs, LINK DIRECT (NF-to-NF rings) against LINK AGENT (every hop back through the agent), both in this run, same cores ($PIN); Mpps delivered, medians of the rounds" \
      "$(med "${MPPS[DIRECT$n]}")" Mpps "LINK AGENT, same run" "$(med "${MPPS[RING$n]}")" \
      "\"direct_cycles_per_hop\": $(med "${HOP[DIRECT$n]}"), \"agent_link_cycles_per_hop\": $(med "${HOP[RING$n]}"), \"direct_nf_cycles_per_packet\": $(med "${NFH[DIRECT$n]}"), \"agent_link_nf_cycles_per_packet\": $(med "${NFH[RING$n]}")"
  done
fi
