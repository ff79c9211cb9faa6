#!/usr/bin/env bash
# 2 MB hugepages for the DPDK processes scripts start (the agent benchmarks, the agent's systemd unit): as root,
# reserve the pages a run needs on top of those already free, mount hugetlbfs if nothing has it mounted, and give
# back exactly what was reserved and mounted afterwards. Anything that fails (not root, the kernel cannot find the
# memory, no hugetlbfs) falls back to `--no-huge`, and says so: DPDK runs either way.
#
# Sourced (agent/bench/common.sh):
#   hugepages_reserve MB   sets HUGE_EAL (EAL arguments: `--huge-dir DIR --huge-unlink` or `--no-huge`) and
#                          HUGE_STATE ("hugepages" or "no hugepages (why)"); MB is the EAL's -m (pages for it
#                          plus headroom). Records what it changed in HUGE_ADDED / HUGE_MOUNTED.
#   hugepages_release      undoes what hugepages_reserve changed (idempotent; call it from an EXIT trap).
# Command line (deploy/agent/metron-agent.service):
#   hugepages.sh run MB COMMAND...   reserves, runs COMMAND with the EAL's memory arguments (hugepages or
#                                    --no-huge, and -m MB) inserted right after its `--dpdk`, forwards
#                                    SIGTERM/SIGINT to it, releases when it exits.
#   hugepages.sh release-state FILE  releases what a `run` killed with SIGKILL left recorded in FILE (or FILE.*).
# METRON_HUGEPAGES=0 forces --no-huge; METRON_HUGE_DIR picks the mount point (default /dev/hugepages).
HP_SYS=/sys/kernel/mm/hugepages/hugepages-2048kB
HUGE_EAL=(--no-huge)
HUGE_STATE="no hugepages"
HUGE_ADDED=0
HUGE_MOUNTED=""
HUGE_STATE_FILE=${HUGE_STATE_FILE:-}

_hp_fallback() {
  HUGE_EAL=(--no-huge)
  HUGE_STATE="no hugepages ($1), --no-huge"
  echo "hugepages: $1: running with --no-huge" >&2
}

_hp_record() {
  [[ -n $HUGE_STATE_FILE ]] || return 0
  printf 'HUGE_ADDED=%s\nHUGE_MOUNTED=%s\n' "$HUGE_ADDED" "$HUGE_MOUNTED" >"$HUGE_STATE_FILE"
}

hugepages_reserve() {
  local mb=$1 pages total free got dir
  HUGE_ADDED=0 HUGE_MOUNTED=""
  if [[ ${METRON_HUGEPAGES:-1} == 0 ]]; then _hp_fallback "METRON_HUGEPAGES=0"; return 0; fi
  if [[ $(id -u) != 0 ]]; then _hp_fallback "not root"; return 0; fi
  if [[ ! -w $HP_SYS/nr_hugepages ]]; then _hp_fallback "no 2 MB hugepage support in this kernel"; return 0; fi
  pages=$(( (mb + 1) / 2 + 32 ))  # the EAL's -m, plus its own allocations beyond it
  total=$(cat "$HP_SYS/nr_hugepages"); free=$(cat "$HP_SYS/free_hugepages")
  if (( free < pages )); then
    echo $(( total + pages - free )) >"$HP_SYS/nr_hugepages" 2>/dev/null || true
    got=$(cat "$HP_SYS/nr_hugepages")
    HUGE_ADDED=$(( got > total ? got - total : 0 ))
    _hp_record
    free=$(cat "$HP_SYS/free_hugepages")
    if (( free < pages )); then
      hugepages_release
      _hp_fallback "only $free of $pages 2 MB pages free after asking the kernel"
      return 0
    fi
  fi
  dir=$(awk '$3 == "hugetlbfs" && ($4 ~ /pagesize=2M/ || $4 !~ /pagesize=/) {print $2; exit}' /proc/mounts)
  if [[ -z $dir ]]; then
    dir=${METRON_HUGE_DIR:-/dev/hugepages}
    mkdir -p "$dir"
    if ! mount -t hugetlbfs -o pagesize=2M nodev "$dir" 2>/dev/null; then
      hugepages_release
      _hp_fallback "cannot mount hugetlbfs at $dir"
      return 0
    fi
    HUGE_MOUNTED=$dir
    _hp_record
  fi
  # --huge-unlink: the EAL unlinks its page files once mapped, so a killed process leaves none behind. Black-box
  # NFs in RING mode (docs/blackbox.md) are DPDK secondaries that map the agent's page files: with
  # METRON_HUGE_MULTIPROCESS=1 the files are kept (and `run` removes them when its command exits).
  HUGE_EAL=(--huge-dir "$dir" --huge-unlink)
  if [[ ${METRON_HUGE_MULTIPROCESS:-0} == 1 ]]; then HUGE_EAL=(--huge-dir "$dir"); fi
  HUGE_STATE="hugepages (2 MB, $pages reserved for -m $mb, $HUGE_ADDED added to the pool)"
  echo "hugepages: $dir, $pages x 2 MB for -m $mb ($HUGE_ADDED added to the kernel's pool)" >&2
}

hugepages_release() {
  if [[ -n $HUGE_MOUNTED ]]; then
    umount "$HUGE_MOUNTED" 2>/dev/null || echo "hugepages: $HUGE_MOUNTED still in use, left mounted" >&2
    HUGE_MOUNTED=""
  fi
  if (( HUGE_ADDED > 0 )); then
    local now
    # The pool's persistent size: sysfs nr_hugepages counts surplus pages too (pages another user gave back while
    # they were still mapped), and subtracting from that total kept them reserved for good.
    now=$(( $(cat "$HP_SYS/nr_hugepages") - $(cat "$HP_SYS/surplus_hugepages") ))
    # Pages still mapped by a process that has not exited become surplus and return to the OS when it does.
    echo $(( now > HUGE_ADDED ? now - HUGE_ADDED : 0 )) >"$HP_SYS/nr_hugepages"
    HUGE_ADDED=0
  fi
  if [[ -n $HUGE_STATE_FILE ]]; then rm -f "$HUGE_STATE_FILE"; fi
}

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
  set -euo pipefail
  case ${1:-} in
    run)
      mb=$2; shift 2
      HUGE_STATE_FILE=${HUGE_STATE_FILE:-/run/metron-hugepages.$$}
      hugepages_reserve "$mb"
      cmd=()
      for a in "$@"; do cmd+=("$a"); if [[ $a == --dpdk ]]; then cmd+=("${HUGE_EAL[@]}" -m "$mb"); fi; done
      trap hugepages_release EXIT
      "${cmd[@]}" &
      child=$!
      trap 'kill -TERM $child 2>/dev/null' TERM INT
      # wait returns early when a trapped signal arrives: wait again until the child has exited
      while true; do
        rc=0; wait "$child" || rc=$?
        kill -0 "$child" 2>/dev/null || break
      done
      if [[ ${HUGE_EAL[0]} == --huge-dir && ${#HUGE_EAL[@]} == 2 ]]; then  # kept page files: the command's own
        prefix=rte; prev=""
        for a in "${cmd[@]}"; do [[ $prev == --file-prefix ]] && prefix=$a; [[ $a == --file-prefix=* ]] && prefix=${a#*=}; prev=$a; done
        rm -f "${HUGE_EAL[1]}/${prefix}map_"*
      fi
      exit "$rc" ;;
    release-state)
      for f in "${2:-/run/metron-hugepages}" "${2:-/run/metron-hugepages}".*; do
        [[ -f $f ]] || continue
        # shellcheck disable=SC1090
        source "$f"; HUGE_STATE_FILE=$f; hugepages_release
      done ;;
    *) echo "usage: hugepages.sh run MB COMMAND... | release-state [PREFIX]" >&2; exit 2 ;;
  esac
fi
