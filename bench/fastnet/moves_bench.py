#!/usr/bin/env python3
"""Operations at rate on the fast network (issue 23 item 2; `make fastmoves-bench`, part of `make bench`). Root,
after `make build`, under /tmp/metron-sys.lock.

  moves_bench.py OUT

The operations of tests/e2e/test_fastmoves_e2e.py (bench/fastnet/moves.py), each once without traffic and once
at moves.PPS in one step of metron-fastgen (1024 UDP flows): on paper-fig3 a make-before-break update, an update
s1 refuses half way (table full), an agent restart; on two-servers the scale-out of half the class to srv2 and the
merge back; and a step with no operation at the same rate (the path's own loss, fastmoves_no_operation_lost).
Everything at moves.PPS (issue 23's >= 250 kpps), whatever the path's baseline. Per operation two figures:
  fastmoves_<op>_lost  packets lost in the operation's step, against the frames sent in it (ratio: the fraction)
  fastmoves_<op>_ms    the operation's duration at rate, against the same operation without traffic, same run
The full report (every step, drop counters, load average) goes to stdout."""
import json
import os
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[1] / "bench" / "scaling"))

import moves  # noqa: E402
from metron_topo import fastgen  # noqa: E402
from scaling_bench import write  # noqa: E402


NO_OP_S = 8.0  # the no-operation step: about as long as an operation's


def timed(fn, refused=False):
    """fn()'s duration in ms; with `refused`, fn must fail (the refused update: what it took to refuse)."""
    t = time.monotonic()
    try:
        answer = fn()
    except Exception:
        if not refused:
            raise
        return (time.monotonic() - t) * 1e3
    if refused:
        raise AssertionError(f"expected a refusal, got {answer}")
    if isinstance(answer, dict) and answer.get("outcome", "DONE") != "DONE":
        raise AssertionError(f"the operation did not complete: {answer}")
    return (time.monotonic() - t) * 1e3


def one_server(tmp):
    """[(op, unloaded ms, loaded result)] on paper-fig3."""
    out = []
    with moves.session("paper-fig3", Path(tmp) / "fig3") as s:
        plan = moves.deploy(s)
        rules = moves.RULES
        idle = {"update": timed(lambda: moves.update(s, rules + 1))}
        with moves.FullTable(s):
            idle["refused_update"] = timed(lambda: moves.update(s, rules + 2), refused=True)
        idle["agent_restart"] = moves.restart(s)["downMs"]
        load = moves.Load(s, plan.allowed_port, ladder=(moves.PPS,))
        try:
            # the path's own loss at the rate, no operation, same run: what an operation's loss compares with
            out.append(("no_operation", None, load.operate("no operation", lambda: time.sleep(NO_OP_S))))
            out.append(("update", idle["update"], load.operate("update", lambda: moves.update(s, rules + 3))))
            with moves.FullTable(s):
                out.append(("refused_update", idle["refused_update"],
                            load.operate("refused update", lambda: moves.update(s, rules + 4))))
            r = load.operate("agent restart", lambda: moves.restart(s))
            out.append(("agent_restart", idle["agent_restart"], r))
        finally:
            load.close()
        s.host.call("DELETE", "/chains/demo")
    return out


def two_servers(tmp):
    out = []
    with moves.session("two-servers", Path(tmp) / "two") as s:
        plan = moves.deploy(s)

        def other(after):
            """The group the scale-out made; none: the scale-out did not happen, and the bench says what it got."""
            groups = s.host.call("GET", "/scaling/demo")["groups"]
            found = [g["id"] for g in groups if g["id"] != "g0"]
            if not found:
                raise RuntimeError(f"moves_bench: no group but g0 after the scale-out ({after}); groups {groups}")
            return found[0]
        idle_out = timed(lambda: moves.split(s))
        idle_back = timed(lambda: moves.merge(s, other("idle")))
        load = moves.Load(s, plan.allowed_port, ladder=(moves.PPS,))
        try:
            r = load.operate("scale-out", lambda: moves.split(s))
            out.append(("scale_out", idle_out, r))
            retire = other(f"at rate: answer {r['op']['answer']}, error {r['op']['error']}")
            out.append(("scale_back", idle_back, load.operate("merge back", lambda: moves.merge(s, retire))))
        finally:
            load.close()
        s.host.call("DELETE", "/chains/demo")
    return out


def main():
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE.parents[1] / "bench" / "results"
    why = fastgen.fastnet.unavailable() or (None if fastgen.binary() else "metron-fastgen not built (make e2e-build)")
    if why:
        sys.exit(f"moves_bench: fast network unavailable: {why}")
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="metron-fastmoves-") as tmp:
        rows = one_server(tmp) + two_servers(tmp)
    for op, idle_ms, r in rows:
        st = r["step"]
        print(json.dumps({"op": op, "idleMs": None if idle_ms is None else round(idle_ms), "opMs": round(moves.op_ms(r)),
                          "error": str(r["op"]["error"]) if r["op"]["error"] else None, "drops": r["drops"],
                          **{k: st[k] for k in ("achievedPps", "sent", "lost", "duplicates", "reordered", "remapped",
                                                "lostRanges")}, "loadavg": os.getloadavg()}))
        write(out, f"fastmoves_{op}_lost", st["lost"], "packets",
              f"frames sent in the operation's step at {st['achievedPps']:.0f} pps", st["sent"])
        if idle_ms is None:
            continue
        write(out, f"fastmoves_{op}_ms", moves.op_ms(r), "ms", "the same operation with no traffic, same run",
              idle_ms)


if __name__ == "__main__":
    main()
