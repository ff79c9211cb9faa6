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
  log=$BUILD/$name.log
  # Leak checks are off because the EAL keeps its memory until exit.
  rc=0
  ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 \
    nice "$fz" -max_total_time="$SECS" -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 \
      -artifact_prefix="$BUILD/crash-$name-" "$corpus" "$SEEDS/$name" >"$log" 2>&1 || rc=$?
  grep -E "^(stat::number_of_executed_units|==[0-9]+==ERROR|SUMMARY)" "$log" || true
  if ((rc != 0)); then
    tail -40 "$log"
    echo "fuzz: $name failed (exit $rc), reproducer in $BUILD/crash-$name-*"
    exit 1
  fi
done
