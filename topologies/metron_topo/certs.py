"""A lab PKI for mutual TLS between the controller and the agents, made with openssl: a CA, one server
certificate per agent (subjectAltName = the address the controller dials) and one client certificate for the
controller. Keys are EC P-256 in PKCS#8 PEM (what both the agent's gRPC and the Java client read). What
`deploy/tls/metron-certs` and `topo up --tls` use; the agent side is deploy/agent/README.md "TLS"."""
import ipaddress
import subprocess
from pathlib import Path

DAYS = "825"
CURVE = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]


def _openssl(*args, cwd):
    r = subprocess.run(["openssl", *args], cwd=cwd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"openssl {args[0]} failed: {r.stderr.strip()}")


def make_ca(directory, name="metron-lab-ca"):
    """A self-signed CA in `directory` (ca.pem, ca.key); answers the certificate's path."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    _openssl("req", "-x509", *CURVE, "-days", DAYS, "-subj", f"/CN={name}", "-keyout", "ca.key", "-out", "ca.pem",
             cwd=d)
    (d / "ca.key").chmod(0o600)
    return d / "ca.pem"


def _san(name):
    try:
        ipaddress.ip_address(name)
        return f"IP:{name}"
    except ValueError:
        return f"DNS:{name}"


def make_cert(directory, name, sans=(), client=False):
    """`<name>.pem` and `<name>.key` signed by the CA in `directory`: a server certificate naming `sans`
    (addresses or DNS names the peer dials), or with client=True a client certificate. Answers (cert, key)."""
    d = Path(directory)
    if not (d / "ca.pem").exists():
        raise RuntimeError(f"no CA in {d} (ca.pem): make one first")
    ext = d / f"{name}.ext"
    lines = [f"extendedKeyUsage={'clientAuth' if client else 'serverAuth'}"]
    if sans:
        lines.append("subjectAltName=" + ",".join(_san(s) for s in sans))
    ext.write_text("\n".join(lines) + "\n")
    _openssl("req", *CURVE, "-subj", f"/CN={name}", "-keyout", f"{name}.key", "-out", f"{name}.csr", cwd=d)
    _openssl("x509", "-req", "-days", DAYS, "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
             "-CAcreateserial", "-extfile", ext.name, "-out", f"{name}.pem", cwd=d)
    (d / f"{name}.key").chmod(0o600)
    (d / f"{name}.csr").unlink()
    ext.unlink()
    return d / f"{name}.pem", d / f"{name}.key"


def make_lab(directory, agents, controller="metron-controller"):
    """CA + one certificate per agent ({name: [address, ...]}) + the controller's client certificate.
    Answers {"ca": path, "controller": (cert, key), "agents": {name: (cert, key)}}."""
    ca = make_ca(directory)
    return {"ca": ca,
            "controller": make_cert(directory, controller, client=True),
            "agents": {name: make_cert(directory, name, sans) for name, sans in agents.items()}}


def controller_fields(lab):
    """The three TLS fields of a server entry, as the ONOS netcfg (MetronServerConfig) and the embedded host's
    topology state name them."""
    cert, key = lab["controller"]
    return {"trustCerts": str(lab["ca"]), "certChain": str(cert), "privateKey": str(key)}
