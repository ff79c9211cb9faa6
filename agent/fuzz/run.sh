#!/usr/bin/env bash
# Runs every libFuzzer target of the agent for SECS seconds each, starting from the seeds in agent/fuzz/seeds and
# keeping the grown corpus in the build dir. Fails on the first crash (the reproducer is left in the build dir).
# usage: run.sh FUZZ_BUILD_DIR SECS
set -euo pipefail
BUILD=$(realpath "$1")
SECS=$2
SEEDS=$(dirname "$(realpath "$0")")/seeds
for fz in "$BUILD"/*_fuzz; do
  name=$(basename "$fz")
  corpus=$BUILD/corpus/$name
  mkdir -p "$corpus"
  echo "fuzz: $name for ${SECS}s"
  # ASan must not reserve what DPDK maps; leak checks are off because the EAL keeps its memory until exit.
  ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 \
    nice "$fz" -max_total_time="$SECS" -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 \
      -artifact_prefix="$BUILD/crash-$name-" "$corpus" "$SEEDS/$name" 2>&1 | grep -E "^(#[0-9]+ *DONE|INFO: Running|stat::number_of_executed_units|==[0-9]+==ERROR|SUMMARY)" || true
  [[ ${PIPESTATUS[0]} -eq 0 ]] || { echo "fuzz: $name failed, see $BUILD/crash-$name-*"; exit 1; }
done
