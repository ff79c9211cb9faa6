"""Waiting for a condition, shared by the end-to-end tests (tests/e2e/support.py) and the benchmarks."""
import time


def wait_for(predicate, timeout, what):
    """Polls `predicate` every 0.2 s until it answers something true (answered) or `timeout` s pass."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")
