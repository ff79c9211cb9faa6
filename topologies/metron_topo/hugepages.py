"""2 MB hugepages through agent/scripts/hugepages.sh (it owns how pages are reserved, mounted and given back), for
the agents' memory (agent.hugepages) and the fast network (fastnet.reserve_hugepages)."""
import subprocess
from pathlib import Path

HUGEPAGES_SH = Path(__file__).resolve().parents[2] / "agent/scripts/hugepages.sh"


def reserve(record, mb):
    """Reserves pages for `mb` MB of DPDK memory, recording what changed in the file `record`; answers (the
    script's state line, the hugetlbfs directory or "" when it fell back to --no-huge, its stderr)."""
    script = (f'HUGE_STATE_FILE={record}; source {HUGEPAGES_SH}; hugepages_reserve {mb}; '
              'echo "$HUGE_STATE"; [[ ${HUGE_EAL[0]} == --huge-dir ]] && echo "${HUGE_EAL[1]}" || echo')
    p = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=True)
    lines = p.stdout.split("\n")
    return lines[0], lines[1], p.stderr.strip()


def release(record):
    """Gives back what `reserve` recorded in `record` (idempotent: the record goes with the release)."""
    subprocess.run(["bash", str(HUGEPAGES_SH), "release-state", str(record)], check=False)
