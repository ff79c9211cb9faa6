"""Running system tools with errors that say which command failed and what it printed."""
import subprocess


class CommandError(RuntimeError):
    pass


def run(argv, *, input=None, check=True, env=None, netns=None):
    if netns:
        argv = ["ip", "netns", "exec", netns] + list(argv)
    p = subprocess.run(argv, input=input, capture_output=True, text=True, env=env)
    if check and p.returncode != 0:
        raise CommandError(f"`{' '.join(argv)}` failed ({p.returncode}): {(p.stderr or p.stdout).strip()}")
    return p


def ip_batch(commands, netns=None):
    """Runs many `ip` commands in one process (much faster than one process each for big topologies)."""
    if not commands:
        return
    argv = ["ip"] + (["-n", netns] if netns else []) + ["-batch", "-"]
    run(argv, input="\n".join(commands) + "\n")
