"""The launcher's record of everything it created. Written to disk before each resource is created, so `down`
can remove exactly those resources (and nothing else) even after a crash half-way through `up`."""
import json
import os
from pathlib import Path


def proc_start_time(pid):
    """Kernel start time of a process (clock ticks since boot), or None if it is gone. Together with the PID it
    identifies the process we started, so teardown never signals an unrelated process that reused the PID."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    # comm (field 2) may contain spaces; fields after the closing parenthesis are space separated.
    return int(stat[stat.rindex(")") + 2:].split()[19])


class State:
    KINDS = ("processes", "namespaces", "veths", "bridges", "paths")

    def __init__(self, path, data):
        self.path = Path(path)
        self.data = data

    @classmethod
    def create(cls, path, **fields):
        data = {k: [] for k in cls.KINDS}
        data.update(fields)
        data["nodes"] = {}
        s = cls(path, data)
        s.save()
        return s

    @classmethod
    def open(cls, path):
        path = Path(path)
        if path.is_dir():
            path = path / "state.json"
        try:
            data = json.loads(path.read_text())
            for kind in cls.KINDS:
                data.setdefault(kind, [])
            return cls(path, data)
        except FileNotFoundError:
            raise FileNotFoundError(f"no topology state at {path} (already down?)") from None

    def save(self):
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.data, indent=1))
        os.replace(tmp, self.path)

    def record(self, kind, entry):
        self.data[kind].append(entry)
        self.save()

    def record_process(self, name, pid, argv):
        self.record("processes", {"name": name, "pid": pid, "start": proc_start_time(pid), "argv": argv})

    def node(self, name):
        return self.data["nodes"].setdefault(name, {})

    def __getitem__(self, key):
        return self.data[key]
