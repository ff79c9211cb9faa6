"""How the launcher starts a Metron agent inside a server's namespace (agent/ owns the binary and its flags)."""
import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
GRPC_PORT = 50051


def binary():
    """The agent binary: $METRON_AGENT, else the CMake build output; None when the agent is not built."""
    for candidate in (os.environ.get("METRON_AGENT"), REPO / "agent/build/metron-agent"):
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return None


def command(binary_path, server, listen_ip, file_prefix):
    """Agent command line for a server: gRPC on its management address, its NICs as AF_PACKET ports."""
    argv = [binary_path, "--listen", f"{listen_ip}:{GRPC_PORT}", "--cores", str(server.cores),
            "--file-prefix", file_prefix]
    for nic in server.nics:
        argv += ["--nic", nic.name]
    return argv
