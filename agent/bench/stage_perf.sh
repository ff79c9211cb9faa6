#!/usr/bin/env bash
# Where the offloaded chain's cycles go, stage by stage (issue 22), this build against a previous one in the same
# run, with the DPDK library calls alone as the ceiling. group_dispatch_bench (16 groups on one core, NAPT->LB per
# group as synthesized, memory-fed, hugepages as in run.sh) runs for SECONDS; once its warm-up pass is over,
# `perf record` (software clock: the development VM has no PMU) samples its worker thread for a window, and each
# function's share of the samples times the run's busy cycles per packet is charged to the stage it belongs to.
# Then datapath_ceiling_bench: rte_hash_lookup_bulk_data alone on the same keys (one table of all the flows) and
# rte_acl on the 1000 rules.
# usage: stage_perf.sh BUILD_DIR BASE_DIR RESULTS_DIR   (BASE_DIR: the previous build's group_dispatch_bench)
#   env: STAGE_TRACES ("100k 1m"), STAGE_GROUPS (16), STAGE_SECONDS (14 at 100k, 32 at 1m), STAGE_WARM_100K (4),
#   STAGE_WARM_1M (20): seconds from the start to the sampled window (reading the trace, the warm-up pass);
#   STAGE_WINDOW (6). At 1M flows the earlier 12 s warm-up and 14 s run put creations (FlowTable::insert, charged
#   to the lookup) or the process's teardown into the window at load 10-30 (session 18).
# Prints "stage <trace> <build> <stage> <cycles>" lines and writes RESULTS_DIR/agent_stages_<trace>.txt.
set -euo pipefail
BUILD=$(realpath "$1")
BASE=$(realpath "$2")
RESULTS=$(realpath "$3")
HERE=$(dirname "$(realpath "$0")")
AGENT_BENCH_EAL_MB=${AGENT_BENCH_EAL_MB:-2048}
# shellcheck source=common.sh
source "$HERE/common.sh"
GROUPS_N=${STAGE_GROUPS:-16}
WINDOW=${STAGE_WINDOW:-6}
[[ -f $DATA/rules1000.txt ]] || $PY "$HERE/gen_traffic.py" rules 1000 "$DATA/rules1000.txt"
[[ -f $DATA/flows100k.pcap ]] || $PY "$HERE/gen_traffic.py" pcap 100000 100000 "$DATA/flows100k.pcap"
configs
CLICK=$GROUP_NAPT_LB

# The stage of a symbol (perf report's), as BENCHMARKS.md groups them.
STAGE_AWK='
function stage(s) {
  if (s ~ /\[k\]/) return "kernel"
  if (s ~ /^librte_hash/) return "lookup"
  if (s ~ /^librte_net_null|^librte_mempool_ring|^librte_ring/) return "egress_tx"
  if (s ~ /^librte_mbuf|^librte_mempool/) return "rx"
  sub(/^[^ ]+ +\[\.\] /, "", s)
  gsub(/\(anonymous namespace\)/, "anon", s)
  sub(/\(.*/, "", s)  # the name without its parameters (nm -C gives them, perf does not)
  if (s ~ /rte_hash|hash_lookup|compare_signatures|search_one_bucket|FlowTable::lookup|FlowTable::holds|FlowTable::index_|lookup_hashed|rte_hash_crc|crc32|hash_key|sig4/) return "lookup"
  if (s ~ /ReplayPort|rte_pktmbuf_alloc|mbuf_alloc|rte_mempool_get|common_ring_mc|bucket_dequeue|mempool_ops_dequeue/) return "rx"
  if (s ~ /rewrite_ipv4|rewrite_packet|rewrite_to_target|FlowRewriter::track|FlowRewriter::touch/) return "rewrite"
  if (s ~ /GroupRuntime::process/) return "telemetry"
  if (s ~ /process_keys|key4_of|SynthRewriter|process_batch/) return "rewriter_loop"
  if (s ~ /CheckIPHeader|ip_checksum|rte_raw_cksum|cksum/) return "checkip"
  if (s ~ /Strip|Unstrip|DecIPTTL|push_to_outputs|Graph::|Element::push|GroupInput|GroupOutput/) return "light_elements"
  if (s ~ /egress|TxBuffer|eth_null|null_tx|rte_pktmbuf_free|mempool_put|common_ring_mp|mempool_ops_enqueue|tx_burst|tx_queues/) return "egress_tx"
  if (s ~ /Engine::|dispatch/) return "dispatch"
  if (s ~ /expire|maintain|evict/) return "expiry"
  if (s ~ /memcpy|memmove|memset/) return "rx"
  return "other"
}'

# profile LABEL GROUP_DISPATCH_BENCH TRACE WARM: "stage cycles" lines and "all cycles"
profile() {
  local label=$1 bin=$2 trace=$3 warm=$4 out pid data
  out=$(mktemp) data=$(mktemp)
  "${HUGE_ENV[@]}" "$bin" "$trace" "$GROUPS_N" "$run_secs" "$CLICK" >"$out" 2>&1 &
  pid=$!
  sleep "$warm"
  perf record -N -q -e cpu-clock -t "$pid" -o "$data" -- sleep "$WINDOW" >/dev/null 2>&1 || true
  wait "$pid" || { echo "stage_perf: $label failed:" >&2; cat "$out" >&2; rm -f "$out" "$data"; return 1; }
  local all
  all=$(awk '/^result/{print $4}' "$out")
  # Addresses perf leaves unresolved in the bench binary (it may not find a copied binary by its build id) are
  # named from its symbol table.
  perf report -i "$data" --no-children --sort dso,sym -F overhead,dso,sym --stdio 2>/dev/null | grep -E '^ +[0-9.]+%' |
    $PY -c '
import bisect, subprocess, sys
dso = sys.argv[1].rsplit("/", 1)[-1]
syms = sorted((int(a, 16), n) for a, t, n in (l.split(" ", 2) for l in subprocess.run(
    ["nm", "-C", "--defined-only", sys.argv[1]], capture_output=True, text=True).stdout.splitlines()
    if l.count(" ") >= 2) if t.lower() in "tw")
addrs = [a for a, _ in syms]
for line in sys.stdin:
    f = line.split()
    if len(f) >= 4 and f[1] == dso and f[3].startswith("0x"):
        i = bisect.bisect_right(addrs, int(f[3], 16)) - 1
        if i >= 0: line = "%s %s [.] %s\n" % (f[0], f[1], syms[i][1])
    sys.stdout.write(line)' "$bin" |
    awk -v all="$all" "$STAGE_AWK"'
      { p = $1; sub(/%/, "", p); $1 = ""; sub(/^ +/, ""); st = stage($0); c[st] += p * all / 100
        if (st == "other" && p > 0.5) printf "other-symbol %s %.1f%%\n", $0, p > "/dev/stderr" }
      END { for (s in c) printf "%s %.1f\n", s, c[s]; printf "all %.1f\n", all }'
  if [[ -n ${STAGE_KEEP:-} ]]; then mv "$data" "$STAGE_KEEP.$label.data"; fi
  rm -f "$out" "$data"
}

for t in ${STAGE_TRACES:-100k 1m}; do
  trace=$DATA/flows$t.pcap
  flows=${t/k/000}; flows=${flows/m/000000}
  [[ -f $trace ]] || $PY "$HERE/gen_traffic.py" pcap "$flows" "$flows" "$trace"
  warm=${STAGE_WARM_100K:-4} run_secs=${STAGE_SECONDS:-14}
  [[ $t == 1m ]] && warm=${STAGE_WARM_1M:-20} run_secs=${STAGE_SECONDS:-32}
  {
    echo "# $GROUPS_N groups, NAPT->LB, flows$t, $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg), $MACHINE"
    profile new "$BUILD/group_dispatch_bench" "$trace" "$warm" | sed "s/^/stage $t new /"
    profile base "$BASE/group_dispatch_bench" "$trace" "$warm" | sed "s/^/stage $t base /"
    cap=131072; [[ $t == 1m ]] && cap=1048576
    "${HUGE_ENV[@]}" "$BUILD/datapath_ceiling_bench" "$DATA/rules1000.txt" "$trace" "$cap" 3 2>/dev/null |
      awk -v t="$t" '/^result/{printf "ceiling %s acl %s\nceiling %s rte_hash_bulk %s\nceiling %s flows %s\n", t, $2, t, $3, t, $4}'
  } | tee "$RESULTS/agent_stages_$t.txt"
done
