#!/usr/bin/python3
"""Benchmark input from a synthesized chain: its software classifier and the packets aimed at it.

  classifier_vectors.py OUT_DIR NAME CLICK_OUT COMPILED_CLICK LINEAR_CLICK PCAP

OUT_DIR is `metron-synth --classifier-vectors` output. NAME's declaration is cut verbatim from the group config
it lives in (column g<k>.NAME of classifier-vectors.tsv) and wired behind the group's `Strip(14) ->
CheckIPHeader`, every output to one net_null port; LINEAR_CLICK is the same with `COMPILE false`. The frames
are the vectors rows on the wire. Both the cutting and the frames come from the agreement test
(tests/e2e/test_classifier_agreement.py), so the benchmark classifies what that test proves correct.
"""
import csv
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "e2e"))
from test_classifier_agreement import declaration, frame, write_pcap  # noqa: E402


def config(decl, name, outputs, compile_):
    if not compile_:
        decl = decl[:-1].rstrip() + ", COMPILE false)"
    lines = ["tx :: ToDevice(net_null0);",
             "src :: FromDevice(net_pcap0) -> Strip(14) -> CheckIPHeader -> %s;" % decl]
    lines += ["%s[%d] -> tx;" % (name, k) for k in range(outputs)]
    return "\n".join(lines) + "\n"


def main(out_dir, name, compiled, linear, pcap):
    out = Path(out_dir)
    with open(out / "classifier-vectors.tsv") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    column = [c for c in rows[0] if c.startswith("g") and c.endswith("." + name)]
    if len(column) != 1:
        sys.exit("%s: expected one group column for '%s', got %s" % (out, name, list(rows[0])))
    group = column[0][1:].split(".", 1)[0]
    decl, outputs = declaration((out / ("group-%s.click" % group)).read_text(), name)
    Path(compiled).write_text(config(decl, name, outputs, True))
    Path(linear).write_text(config(decl, name, outputs, False))
    write_pcap(pcap, [frame(i, r) for i, r in enumerate(rows)])


if __name__ == "__main__":
    if len(sys.argv) != 6:
        sys.exit(__doc__)
    main(*sys.argv[1:])
