#!/usr/bin/env bash
# HyperscanDPI stream mode vs block mode, 100k TCP flows, same trace, same run (issue 24): dpi_stream_bench builds
# the trace in memory (a replayed pcap would repeat its sequence numbers, which stream mode skips as
# retransmissions). Writes bench/results/agent_dpi_stream_100k*.json. Called by run.sh; runs alone as
#   dpi_bench.sh BUILD_DIR RESULTS_DIR       env: AGENT_BENCH_ROUNDS (3), DPI_BENCH_FLOWS (100000)
set -euo pipefail
BUILD=$(realpath "$1")
RESULTS=$(realpath "$2")
HERE=$(dirname "$(realpath "$0")")
# shellcheck source=common.sh
source "$HERE/common.sh"
FLOWS=${DPI_BENCH_FLOWS:-100000}
SEGS=16
PAYLOAD=512

read -r s_mpps b_mpps io_mpps s_cyc b_cyc s_match b_match shed s_gbps b_gbps < <(
  "$BUILD/dpi_stream_bench" "$FLOWS" "$SEGS" "$PAYLOAD" "$ROUNDS" | awk '/^result/{print $2, $3, $4, $5, $6, $7, $8, $9, $10, $11}')
write agent_dpi_stream_100k "HyperscanDPI MODE STREAM, $FLOWS TCP flows interleaved, $SEGS in-order segments of $PAYLOAD B each, 8 patterns; Mpps per CPU-second, frame building included (I/O-only loop: $io_mpps Mpps)" \
  "$s_mpps" Mpps "MODE BLOCK, same trace" "$b_mpps" \
  "\"gbps_payload\": $s_gbps, \"baseline_gbps_payload\": $b_gbps, \"matches\": $s_match, \"baseline_matches\": $b_match, \"expected_matches\": $(( (FLOWS + 99) / 100 )), \"streams_shed\": $shed, \"io_only_mpps\": $io_mpps"
write agent_dpi_stream_100k_cycles "HyperscanDPI's own CPU cycles per packet (loop minus the I/O-only loop), MODE STREAM, $FLOWS TCP flows, $PAYLOAD B payloads" \
  "$s_cyc" cyc/pkt "MODE BLOCK, same trace" "$b_cyc" ""
