#!/usr/bin/python3
"""One issue-22 target row's analysis for targets_bench.sh: prints the row's extra JSON fields (no braces).

  targets_row.py MPPS CYCLES TARGET_MPPS PARTS IO_CYCLES HASH_CYCLES ACL_CYCLES ACL_ALGORITHM [HAND]
  (env PROF: the profiled run's lines; ACL_ALGORITHM: rte_acl's classify implementation, in the row and its ceiling;
  HAND: MODE:CYCLES:INDEX_CYCLES, the cycles per packet of handwritten_nat_bench MODE and MODE-index in the same
  rounds, or "-")

MPPS / CYCLES: the row's Mpps per CPU-second and busy cycles per packet (TSC cycles scaled to its CPU time, so
MPPS x CYCLES is the TSC rate). PARTS: the library calls in the ceiling, a subset of "io hash acl". PROF: either
the standalone agent's "profile.NAME cycles batches packets" lines or group_dispatch_bench's "stage NAME cycles"
lines (GROUP_PROFILE=1); their shares are applied to CYCLES (the profiled run pays a few clock reads per batch).
"""
import json
import os
import sys

# What the library alone costs for a stage's work, by the stage's kind (the element's sub-stage names).
IO = "rx + tx"
# A group's telemetry counted in its rewriter's key pass (core/class_count.h) is inside that pass's cycles.
LOOKUP_COUNTING = "flow lookup with the group telemetry (counted in its key pass)"
LIBRARY = {"flow lookup": ("hash", "rte_hash_lookup_bulk_data"), LOOKUP_COUNTING: ("hash", "rte_hash_lookup_bulk_data"),
           "classify": ("acl", "rte_acl_classify"),
           IO: ("io", "the same port, nothing between"),
           "rx, dispatch by tag, tx (outside the group graphs)": ("io", "rx + tx, nothing between")}


def kind(name, rewriters, classifiers, counted_in_keys=False):
    """The stage's kind: the library counterpart's key in LIBRARY, or the stage's own name (our code). An element
    is told by its sub-stages, whatever the config named it: a rewriter has "lookup" (its "keys" hold the header
    check, the key and its signature: the rte_hash's own work), an IP classifier "classify"."""
    element, _, sub = name.rpartition(".")
    if element in rewriters and sub in ("keys", "lookup"):
        return LOOKUP_COUNTING if counted_in_keys else "flow lookup"
    if element in classifiers and sub == "classify":
        return "classify"
    if element in classifiers and sub == "keys":
        return "classifier keys (IPFilter checks and reads the headers)"
    if name in rewriters:
        return "SynthRewriter's own (rewrite, checksums, flow state, new flows, expiry sweep)"
    if name in ("loop", "src") or name.startswith("ToDevice"):
        return IO
    if name == "outside_graphs":
        return "rx, dispatch by tag, tx (outside the group graphs)"
    if name == "output":
        return "egress (dst MAC, into the tx buffer)"
    if name == "telemetry":
        return "group telemetry (per class packets, bytes, source-port bits)"
    return name.split("@")[0]


def stages(lines, cycles):
    raw = {}
    for line in lines:
        f = line.split()
        if not f:
            continue
        if f[0].startswith("profile."):
            raw[f[0][len("profile."):]] = float(f[1])
        elif f[0] == "stage":
            raw[f[1]] = float(f[2])
    total = sum(raw.values())
    if total <= 0:
        raise SystemExit("no profile")
    rewriters = {n.rpartition(".")[0] for n in raw if n.endswith(".lookup")}
    classifiers = {n.rpartition(".")[0] for n in raw if n.endswith(".classify")}
    # the group's own walk read nothing: its rewriter counted the telemetry in its key pass
    counted_in_keys = raw.get("telemetry") == 0 and bool(rewriters)
    by_kind = {}
    for name, c in raw.items():
        k = kind(name, rewriters, classifiers, counted_in_keys)
        by_kind[k] = by_kind.get(k, 0.0) + c * cycles / total
    return {k: round(v, 1) for k, v in sorted(by_kind.items(), key=lambda kv: -kv[1]) if round(v, 1) > 0}


def handwritten(arg, cycles, ceiling):
    """The row's work written by hand as the row's fields, or None: handwritten_nat_bench MODE (an l3fwd-style loop
    with the same library calls: the rte_hash call, the flow's record, the rewrite) and MODE-index (the same loop on
    the agent's FlowTable): their cycles, their own ratios to the library calls alone, and the row's speed over
    theirs (above 1: the row is faster)."""
    if arg == "-":
        return None
    mode, lib_c, index_c = arg.split(":")
    lib_c, index_c = float(lib_c), float(index_c)
    ratio, index_ratio = ceiling / lib_c, ceiling / index_c
    says = (f"the same work written by hand (handwritten_nat_bench {mode}: one loop, the same port and rte_hash "
            f"call, the flow's record and rewrite) takes {lib_c:.0f} cycles, {ratio:.3f} of the library calls alone; "
            f"on the agent's FlowTable ({mode}-index) {index_c:.0f}, {index_ratio:.3f}")
    says += (" (under the 0.667 asked: the calls alone leave out the per-flow record and rewrite a NAT must do)"
             if max(ratio, index_ratio) < 1 / 1.5 else "")
    says += f"; the row runs at {lib_c / cycles:.2f}x and {index_c / cycles:.2f}x their speeds"
    return {"mode": mode, "rte_hash_cycles_per_packet": round(lib_c, 1), "rte_hash_ratio_to_ceiling": round(ratio, 3),
            "row_speed_over_rte_hash": round(lib_c / cycles, 3),
            "flowtable_cycles_per_packet": round(index_c, 1), "flowtable_ratio_to_ceiling": round(index_ratio, 3),
            "row_speed_over_flowtable": round(index_c / cycles, 3), "says": says}


def main():
    mpps, cycles, target = float(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
    parts = sys.argv[4].split()
    lib = {"io": float(sys.argv[5]), "hash": float(sys.argv[6]), "acl": float(sys.argv[7])}
    acl_algorithm = sys.argv[8]
    ceiling = sum(lib[p] for p in parts)
    by_kind = stages(os.environ.get("PROF", "").splitlines(), cycles)
    for_target = mpps * cycles / target
    met = mpps >= target
    named = []
    for k, c in list(by_kind.items())[:6]:
        if k in LIBRARY and LIBRARY[k][0] in parts:
            key, call = LIBRARY[k]
            call += f" ({acl_algorithm})" if key == "acl" else ""
            named.append(f"{k} {c:.0f} (alone: {call} {lib[key]:.0f})")
        else:
            named.append(f"{k} {c:.0f} (no library call)")
    within = cycles <= 1.5 * ceiling
    hand = handwritten(sys.argv[9] if len(sys.argv) > 9 else "-", cycles, ceiling)
    # What stands in the way of each unmet figure: the Mpps target, then 1.5x of the library calls alone, with the
    # stages' cycles and, for those with a library counterpart, what the library alone costs for them.
    missed = ([f"{target:g} Mpps needs <= {for_target:.0f} cycles per packet at this clock"] if not met else []) + \
             ([f"within 1.5x of the library calls alone needs <= {1.5 * ceiling:.0f}"] if not within else [])
    in_the_way = ("target met, within 1.5x of the library calls alone" if not missed else
                  "; ".join(missed) + f"; the row takes {cycles:.0f}, the library calls alone {ceiling:.0f} "
                  f"({' + '.join(parts)}); largest stages: " + "; ".join(named))
    if hand and not within:
        in_the_way += "; " + hand["says"]
    out = {
        "baseline_mpps": round(mpps * cycles / ceiling, 3),
        "target_mpps": target,
        "target_met": met,
        "cycles_per_packet": round(cycles, 1),
        "cycles_for_target": round(for_target, 1),
        "ceiling_cycles_per_packet": round(ceiling, 1),
        "ceiling_parts": {p: lib[p] for p in parts},
        **({"acl_classify": acl_algorithm} if "acl" in parts else {}),
        "within_1_5x_of_ceiling": within,
        "stages": by_kind,
        "in_the_way": in_the_way,
        **({"handwritten": {k: v for k, v in hand.items() if k != "says"}} if hand else {}),
    }
    print(", ".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in out.items()))


if __name__ == "__main__":
    main()
