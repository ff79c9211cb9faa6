#!/usr/bin/env bash
# Flow state at 1M NAPT flows (64k in a smoke run): saving and restoring it across an agent restart
# (state_persist_bench) and how long copying it holds the group's core (state_slice_bench), each against the path
# it replaces, measured in the same run. Writes bench/results/agent_state_*_1m.json. Called by run.sh; runs alone as
#   state_bench.sh BUILD_DIR RESULTS_DIR     env: AGENT_BENCH_ROUNDS (3), BENCH_SMOKE, METRON_EAL_MEMORY_MB
# Both binaries hold three tables of the flows at once and start their EAL on --no-huge with the memory those take
# (eal_mb, the EAL's -m: 669 MB at 1M flows, bench/flow_frames.h TablesEalMb; METRON_EAL_MEMORY_MB overrides it).
# They use no hugepages: their rows carry the --no-huge machine line.
set -euo pipefail
BUILD=$(realpath "$1")
RESULTS=$(realpath "$2")
HERE=$(dirname "$(realpath "$0")")
# shellcheck source=common.sh
source "$HERE/common.sh"
ROW_MACHINE=$MACHINE_NOHUGE

# Flow state across an agent restart, 1M NAPT flows in one group (state_persist_bench): what the shutdown save
# and a checkpoint cost (export between two batches of the core + write to disk) against the in-memory export a
# split already does, and what a redeploy adds to restore them (read, check, parse + import) against importing
# the same table from memory.
read -r s_export s_save s_load s_import s_copy s_mb s_eal < <(result "$BUILD/state_persist_bench" "$FLOWS_1M" "$ROUNDS" \
  "$DATA/state")
write agent_state_save_1m "Save the flow state of 1M NAPT flows (one SynthRewriter) to the state directory: export on the core + serialize, CRC, write, fsync, rename (${s_mb} MB file)" \
  "$(awk -v a="$s_export" -v b="$s_save" 'BEGIN{printf "%.1f", a+b}')" ms "in-memory export only (what a split copies)" "$s_export" \
  "\"file_mb\": $s_mb, \"core_stall_ms\": $s_export, \"write_ms\": $s_save, \"eal_memory_mb\": $s_eal"
write agent_state_restore_1m "Restore 1M NAPT flows from the state directory into a freshly deployed group: read, check, parse + import" \
  "$(awk -v a="$s_load" -v b="$s_import" 'BEGIN{printf "%.1f", a+b}')" ms "export + import of the same table in memory (a split's copy)" "$s_copy" \
  "\"load_ms\": $s_load, \"import_ms\": $s_import, \"eal_memory_mb\": $s_eal"

# How long a copy of 1M flows holds the group's core (state_slice_bench, a running worker), against the paths
# they replace, measured in the same run: checkpoints, the shutdown save, ExportState and the sources a split's
# new half is filled from copy in slices between batches (core/state_copy.h) instead of the whole table in one
# handoff; a split's kept half adopts the tables at its handoff instead of copying them there (export + import,
# what a merge's take-over still does). docs/scaling.md#state-copy
read -r c_whole c_longest c_total c_slices c_copy c_cpu c_adopt c_eal < <(result "$BUILD/state_slice_bench" "$FLOWS_1M" \
  "$ROUNDS")
write agent_state_copy_stall_1m "Longest time a core is held while 1M NAPT flows are copied out of it (checkpoint, ExportState, a split's new half): sliced copy, ${c_slices} slices" \
  "$c_longest" ms "whole table in one handoff (the previous path)" "$c_whole" \
  "\"longest_slice_cpu_ms\": $c_cpu, \"copy_total_ms\": $c_total, \"slices\": $c_slices, \"eal_memory_mb\": $c_eal"
write agent_state_split_stall_1m "Longest time a split of a 1M-flow NAPT group holds the group's core: the kept half adopts the tables in one handoff (${c_adopt} ms), the new half is filled from a sliced copy" \
  "$(awk -v a="$c_longest" -v b="$c_adopt" 'BEGIN{printf "%.3f", (a > b ? a : b)}')" ms "export + import at the take-over handoff (the previous path; a merge's take-over still)" "$c_copy" \
  "\"adopt_handoff_ms\": $c_adopt, \"longest_slice_ms\": $c_longest, \"eal_memory_mb\": $c_eal"
