#!/usr/bin/env python3
"""What failed in `make test`, printed last (the Makefile's `test` target runs it after every suite).

CI shows the start and the end of a run's output; the suites run one after another (Java, agent, e2e, Karaf), so a
failure's message in an early suite ends up in the middle, where it is cut. Each suite writes a JUnit XML report
into one directory (pytest --junitxml, ctest --output-junit); this prints, for each failed or erroring test, its
suite, name, message and the last lines of its traceback and captured output, within a bound per test.

    test_recap.py DIR
"""
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

TRACE_LINES = 25   # the end of the traceback: the assertion and the lines that led to it
OUTPUT_LINES = 15  # the end of what the test printed (the e2e tests print the host's last log lines)
MESSAGE_CHARS = 1500


def tail(text, n):
    lines = [ln for ln in (text or "").splitlines() if ln.strip()]
    return lines[-n:]


def failures(report):
    try:
        root = ET.parse(report).getroot()
    except ET.ParseError as e:
        yield f"{report.name}: unreadable report ({e})", "", []
        return
    for case in root.iter("testcase"):
        for tag in ("failure", "error"):
            bad = case.find(tag)
            if bad is None:
                continue
            name = "::".join(p for p in (case.get("classname", ""), case.get("name", "")) if p)
            out = case.find("system-out")
            shown = tail(bad.text, TRACE_LINES) + ["--- its output, last lines:"] + tail(
                out.text if out is not None else "", OUTPUT_LINES)
            yield f"{tag.upper()} {name}", (bad.get("message") or "")[:MESSAGE_CHARS], shown


def main(argv):
    reports = sorted(Path(argv[1]).glob("*.xml")) if len(argv) > 1 and Path(argv[1]).is_dir() else []
    found = [(r.stem, f) for r in reports for f in failures(r)]
    print(f"test recap: {len(reports)} suite report(s) in {argv[1] if len(argv) > 1 else '?'}, "
          f"{len(found)} failed test(s)")
    for suite, (what, message, lines) in found:
        print(f"== [{suite}] {what}")
        if message:
            print("   " + message.replace("\n", "\n   "))
        for ln in lines:
            print("   | " + ln)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
