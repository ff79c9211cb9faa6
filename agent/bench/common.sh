# Shared by the agent benchmark scripts (run.sh, perf.sh, state_bench.sh, ...): paths, EAL arguments, the machine
# line, result JSON, medians, the 1M-flow rows' flow count, result() and the IPv4 Click configurations. Expects
# BUILD, RESULTS and HERE to be set.
DATA=$BUILD/bench-data
AGENT=$BUILD/metron-agent
SECS=${AGENT_BENCH_SECONDS:-3}
ROUNDS=${AGENT_BENCH_ROUNDS:-3}
PY=/usr/bin/python3  # the apt python that sees scapy
mkdir -p "$DATA" "$RESULTS"
# Hugepages by default (agent/scripts/hugepages.sh: reserved as root, released when the script exits); EAL_NOHUGE
# runs the same process on --no-huge memory, the baseline row each workload keeps. A nested script (perf.sh from
# run.sh) finds the pages free and the mount there, and changes nothing.
# shellcheck source=../scripts/hugepages.sh
source "$HERE/../scripts/hugepages.sh"
EAL_MB=${AGENT_BENCH_EAL_MB:-1024}  # hugepages reserved for a run (2048: the 1M-flow offloaded rows)
EAL_COMMON=(-m "$EAL_MB" --no-pci --log-level lib.eal:error --log-level pmd:error)
EAL_NOHUGE=(--no-huge "${EAL_COMMON[@]}")
hugepages_reserve "$EAL_MB"
trap hugepages_release EXIT
EAL=("${HUGE_EAL[@]}" "${EAL_COMMON[@]}")
HUGE=0; [[ ${HUGE_EAL[0]} == --huge-dir ]] && HUGE=1
# The bench binaries' own EAL (eal_default_args) on the same hugepages: prefix their command with "${HUGE_ENV[@]}"
HUGE_ENV=(env); (( HUGE )) && HUGE_ENV=(env "METRON_EAL_HUGE_DIR=${HUGE_EAL[1]}")
CPU_LINE="$(lscpu | sed -n 's/^Model name:[[:space:]]*//p' | head -1), $(nproc) cores shared, DPDK $(pkg-config --modversion libdpdk)"
MACHINE="$CPU_LINE, $HUGE_STATE"
MACHINE_NOHUGE="$CPU_LINE, --no-huge"
# BENCH_SMOKE=1 (make test's bench smoke): every bench runs, briefly, into a scratch results directory.
if [[ ${BENCH_SMOKE:-0} == 1 ]]; then SECS=${AGENT_BENCH_SECONDS:-0.3}; ROUNDS=${AGENT_BENCH_ROUNDS:-1}; fi

# The 1M-flow rows (memory, state save/restore/copy) on 64k flows in a smoke run.
FLOWS_1M=1048576
if [[ ${BENCH_SMOKE:-0} == 1 ]]; then FLOWS_1M=65536; fi

median() { sort -g | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }

write() {  # name description value unit baseline baseline_value extra
  local extra=${7:+, $7}
  jq -n --arg name "$1" --arg desc "$2" --argjson v "$3" --arg unit "$4" --arg b "$5" --argjson bv "$6" --arg m "${ROW_MACHINE:-$MACHINE}" \
    "{name: \$name, description: \$desc, value: \$v, unit: \$unit, baseline: \$b, baseline_value: \$bv,
      ratio: (if \$bv == 0 then null else ((\$v / \$bv) * 1000 | round / 1000) end), machine: \$m$extra}" \
    >"$RESULTS/$1.json"
  echo "bench: $1 = $3 $4 (baseline $5: $6)"
}

cfg() { printf '%s\n' "$2" > "$DATA/$1.click"; echo "$DATA/$1.click"; }
# replay_cfg NAME FILE: FILE's configuration on the memory-fed port (replay0) instead of the pcap vdev and net_null:
# read from memory, sent back to the pool as a NIC's fast-free tx returns mbufs (agent/src/drivers/replay_port.h).
replay_cfg() { cfg "$1" "$(sed 's/net_pcap0/replay0/; s/ToDevice(net_null0)/ToDevice(replay0)/' "$2")"; }
# The benchmarks' IPv4 configurations (defines RULES, LB, FWD, IO, FILTER, FILTER_LINEAR, NAPT, CHAIN, CHAIN_NAIVE).
configs() {
  RULES=$(cat "$DATA/rules1000.txt")
  LB='PATTERN 5.5.5.5 1024-65535 10.0.0.10 80, PATTERN 5.5.5.5 1024-65535 10.0.0.11 80, PATTERN 5.5.5.5 1024-65535 10.0.0.12 80, PATTERN 5.5.5.5 1024-65535 10.0.0.13 80'
  FWD=$(cfg fwd 'a :: FromDevice(net_null0) -> ToDevice(net_null1); b :: FromDevice(net_null1) -> ToDevice(net_null0);')
  IO=$(cfg io 'src :: FromDevice(net_pcap0) -> ToDevice(net_null0);')
  FILTER=$(cfg filter "src :: FromDevice(net_pcap0) -> Strip(14) -> CheckIPHeader -> IPFilter($RULES) -> Unstrip(14) -> ToDevice(net_null0);")
  FILTER_LINEAR=$(cfg filter_linear "src :: FromDevice(net_pcap0) -> Strip(14) -> CheckIPHeader -> IPFilter($RULES, COMPILE false) -> Unstrip(14) -> ToDevice(net_null0);")
  NAPT=$(cfg napt 'src :: FromDevice(net_pcap0) -> Strip(14) -> CheckIPHeader -> SynthRewriter(PATTERN 5.5.5.5 1024-65535 - -, CAPACITY 262144) -> Unstrip(14) -> ToDevice(net_null0);')
  # The offloaded chain's agent side, one group: NAPT->LB as synthesized (one SynthRewriter), each table twice its
  # group's flows (@CAPACITY@, group_dispatch_bench). The issue-22 rows run the synthesizer's own config
  # (deployed_group: this plus Click's timeouts); this hand-written form serves the A/B tools (hotpath_ab.sh,
  # stage_perf.sh), which compare builds without running the synthesizer.
  GROUP_NAPT_LB="input -> Strip(14) -> CheckIPHeader -> SynthRewriter($LB, SELECT maglev, CAPACITY @CAPACITY@) -> DecIPTTL -> Unstrip(14) -> [0]output;"
  # The chain as the synthesizer emits it: one classifier, one flow table for NAPT+LB, one header parse.
  CHAIN=$(cfg chain "src :: FromDevice(net_pcap0) -> Strip(14) -> CheckIPHeader -> IPFilter($RULES) -> SynthRewriter($LB, SELECT maglev, CAPACITY 262144) -> DecIPTTL -> Unstrip(14) -> ToDevice(net_null0);")
  # The same three NFs run one after the other as separate FastClick-style NFs would: each parses headers again,
  # the firewall is a linear filter program, NAPT and LB keep separate flow tables.
  CHAIN_NAIVE=$(cfg chain_naive "src :: FromDevice(net_pcap0) -> Strip(14) -> CheckIPHeader -> IPFilter($RULES, COMPILE false) -> Unstrip(14)
 -> Strip(14) -> CheckIPHeader -> IPRewriter(pattern 5.5.5.5 1024-65535 - - 0 0, CAPACITY 262144) -> Unstrip(14)
 -> Strip(14) -> CheckIPHeader -> lb :: IPRewriter(mg, CAPACITY 262144) -> DecIPTTL -> Unstrip(14) -> ToDevice(net_null0);
 mg :: MaglevIPMapper(- - 10.0.0.10 80 0 0, - - 10.0.0.11 80 0 0, - - 10.0.0.12 80 0 0, - - 10.0.0.13 80 0 0);")
}

# result BINARY ARGS...: the fields of the binary's "result" line. A binary that prints none (it failed) leaves its
# own last lines on stderr and status 1: `read` then finds nothing and the bench stops saying why, not silently.
result() {
  local out line
  out=$("$@" 2>&1) || true
  line=$(grep -m1 '^result ' <<<"$out") || {
    echo "bench: no result from $*:" >&2; grep -v '^EAL:\|^TELEMETRY:' <<<"$out" | tail -5 >&2; return 1; }
  echo "${line#result }"
}

# replay_agent AGENT CLICK TRACE [FLAGS]: the agent binary AGENT running CLICK on TRACE through the memory-fed port
# (replay0, in and out) for SECS: "mpps_cpu mpps_wall cycles_per_packet" (per CPU-second of the worker; busy
# cycles scaled by CPU over wall time), then the --profile lines when FLAGS ask for them. Status 1 if nothing ran.
replay_agent() {
  # shellcheck disable=SC2086
  "$1" ${4:-} --duration "$SECS" --mbufs 131071 --replay "replay0=$3" --dpdk -l 0 "${EAL[@]}" \
    --file-prefix "ra$$" --vdev net_null0 -- "$2" 2>&1 |
    awk '/^src\.count /{n=$2} /^cpu_seconds /{c=$2} /^elapsed /{e=$2} /busy_cycles /{y=$2} /^profile\./{p = p $0 "\n"}
         END{if (n == 0 || c == 0) exit 1; printf "%.3f %.3f %.1f\n%s", n/c/1e6, n/e/1e6, y/n*c/e, p}'
}
# group_run BENCH GROUPS TRACE [profile] [CLICK]: group_dispatch_bench binary BENCH with GROUPS groups on one core
# running CLICK (default GROUP_NAPT_LB) on TRACE for SECS, on hugepages unless run under nohuge (the bench's own EAL
# is --no-huge without METRON_EAL_HUGE_DIR): the same three figures, then its "stage" lines with "profile"
# (GROUP_PROFILE=1). Status 1 if it printed no result (a frame or a counter went wrong).
group_run() {
  local env=("${HUGE_ENV[@]}"); [[ ${EAL[0]} == --no-huge ]] && env=(env)
  [[ ${4:-} == profile ]] && env+=(GROUP_PROFILE=1)
  "${env[@]}" "$1" "$3" "$2" "$SECS" "${5:-$GROUP_NAPT_LB}" 2>&1 |
    awk '/^result/{print $2, $3, $4; ok=1} /^stage /{print} END{exit !ok}'
}
# deployed_group: the agent side of FW(1000)->NAPT->LB as the controller deploys it with the firewall in the switch
# (gen_traffic.py chain, synthesized for the P4 tagger: every filter entry offloaded), into DEPLOYED_CLICK (the
# group's Click config, its table sized by group_dispatch_bench: @CAPACITY@) and DEPLOYED_GROUPS (how many groups
# the synthesizer made). group_dispatch_bench tags group g's frames with class id g + 1: the bench stops unless
# the synthesizer's groups hold exactly those classes and run one config (the bench runs one for every group), so a
# change in what is deployed changes the rows or stops them, never silently.
deployed_group() {
  local dir=$DATA/fw_napt_lb.p4 json=$DATA/fw_napt_lb.json
  $PY "$HERE/gen_traffic.py" chain "$DATA/rules1000.txt" 262144 "$json"
  rm -rf "$dir"
  "$HERE/../../synthesizer/bin/metron-synth" "$json" --target P4_TAGGER -o "$dir" >/dev/null
  DEPLOYED_GROUPS=$(jq '.groups | length' "$dir/classes.json")
  jq -e '[.groups[] | .classIds] == [range(1; (.groups | length) + 1) | [.]] and all(.groups[]; .classifies | not)' \
    "$dir/classes.json" >/dev/null ||
    { echo "bench: $json synthesized into groups other than one class each, ids 1..n: $(jq -c '[.groups[] | .classIds]' "$dir/classes.json")" >&2
      return 1; }
  DEPLOYED_CLICK=$(grep -v '^//' "$dir/group-0.click" | sed 's/CAPACITY 262144/CAPACITY @CAPACITY@/')
  local g
  for g in "$dir"/group-*.click; do
    cmp -s <(grep -v '^//' "$g") <(grep -v '^//' "$dir/group-0.click") ||
      { echo "bench: $g differs from group-0.click: the bench runs one config for every group" >&2; return 1; }
  done
  grep -q '@CAPACITY@' <<<"$DEPLOYED_CLICK" || { echo "bench: $dir/group-0.click sizes no flow table" >&2; return 1; }
}
