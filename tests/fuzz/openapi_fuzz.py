"""Property-based fuzz of the Metron REST API from its own document (/onos/metron/swagger.json), with schemathesis.

Runs in the venv of deploy/deps/fuzz.requirements.txt (scripts/pyvenv.sh), against a running host:

    openapi_fuzz.py --base-url http://127.0.0.1:PORT/onos/metron --auth admin:PASSWORD --cases 5000 \
        --points of:0000000000000001/1,of:0000000000000002/1 --keep resident

Every operation of the document is exercised. Request bodies come from the document's chain schema (what
schemathesis generates from it: valid JSON shapes, and schema-violating ones) and, for most cases, from a
grammar of real chains drawn by Hypothesis: one to three NFs (firewalls of random rules, NAPTs, load balancers,
TTL decrements, and sometimes an element or rule that does not exist) linked in order, with deployment points
of the topology, so requests get past the JSON shape into synthesis, placement and deployment. Every response
is checked against the document (status documented, content type, body schema) and must not be a 5xx.
Chains the fuzz brings up (a submission, or the replacement of a chain a refusal left FAILED) are removed right
after (not counted); chains named in --keep are never touched by the runner (it stops if one would be).

--validate instead calls every operation once with real arguments (the chain named by --keep, its groups) and
with each documented error, and checks each answer against the document.

Prints "openapi fuzz: N requests ... 0 server errors, 0 nonconforming" and exits 1 when any check failed.
"""
import argparse
import base64
import collections
import json
import os
import sys
import tempfile
import time
import urllib.error
import urllib.request

# Hypothesis keeps caches in ./.hypothesis unless told otherwise: not in the caller's working tree
os.environ.setdefault("HYPOTHESIS_STORAGE_DIRECTORY", os.path.join(tempfile.gettempdir(), "metron-fuzz-hypothesis"))

import hypothesis  # noqa: E402
import hypothesis.strategies as st  # noqa: E402
import schemathesis  # noqa: E402
from hypothesis import HealthCheck, Phase, settings  # noqa: E402
from schemathesis import DataGenerationMethod  # noqa: E402
from schemathesis.checks import not_a_server_error  # noqa: E402
from schemathesis.specs.openapi.checks import (content_type_conformance, response_schema_conformance,  # noqa: E402
                                               status_code_conformance)

CHECKS = (not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance)
BODY_OPS = {("POST", "/chains"), ("POST", "/chains/validate"), ("PUT", "/chains/{name}")}
# share of the requested cases per operation: chain bodies carry the logic, the rest is quick
WEIGHTS = {("POST", "/chains"): 0.3, ("POST", "/chains/validate"): 0.35, ("PUT", "/chains/{name}"): 0.1}

# ---- a grammar of chains ----------------------------------------------------------------------------------------
PORT = st.integers(0, 65535)
OCTET = st.integers(0, 255)
ADDRESS = st.builds(lambda a, b, c, d: f"{a}.{b}.{c}.{d}", st.sampled_from([10, 172, 192, 198]), OCTET, OCTET, OCTET)
PREFIX = st.builds(lambda a, n: f"{a}/{n}", ADDRESS, st.integers(8, 32))


@st.composite
def filter_rule(draw):
    parts = []
    proto = draw(st.sampled_from(["", "udp", "tcp", "icmp"]))
    if proto:
        parts.append(proto)
    if proto in ("udp", "tcp") and draw(st.booleans()):
        lo = draw(PORT)
        hi = draw(st.integers(lo, min(65535, lo + draw(st.sampled_from([0, 0, 10, 1000])))))
        parts.append(f"dst port {lo}" if lo == hi else f"dst port {lo}-{hi}")
    if draw(st.booleans()):
        parts.append(f"src net {draw(PREFIX)}")
    if draw(st.integers(0, 9)) == 0:
        parts.append(draw(st.sampled_from(["ip ttl > 3", "tcp opt syn", "ip vers 6", "src port 53", "dst host ::1",
                                           "bogus-field 7"])))
    return " and ".join(parts) if parts else "all"


@st.composite
def firewall(draw):
    rules = [f"{draw(st.sampled_from(['allow', 'deny']))} {draw(filter_rule())}"
             for _ in range(draw(st.integers(1, 8)))]
    rules.append(draw(st.sampled_from(["deny all", "allow all"])))
    return "FromDevice(in0) -> Strip(14) -> CheckIPHeader -> fw :: IPFilter(" + ", ".join(rules) + \
        ") -> Unstrip(14) -> ToDevice(out0);"


@st.composite
def napt(draw):
    lo = draw(st.integers(1024, 60000))
    return ("FromDevice(in0) -> Strip(14) -> CheckIPHeader -> rw :: IPRewriter(pattern "
            f"{draw(ADDRESS)} {lo}-{lo + draw(st.integers(0, 5000))} - - 0 1, drop) -> Unstrip(14) "
            "-> ToDevice(out0);")


@st.composite
def load_balancer(draw):
    backends = draw(st.lists(ADDRESS, min_size=1, max_size=4))
    port = draw(st.integers(1, 65535))
    maps = ", ".join(f"- - {b} {port} 0 1" for b in backends)
    return (f"rr :: RoundRobinIPMapper({maps});\nFromDevice(in0) -> Strip(14) -> CheckIPHeader -> "
            "lb :: IPRewriter(rr, drop) -> Unstrip(14) -> ToDevice(out0);")


TTL = st.just("FromDevice(in0) -> Strip(14) -> CheckIPHeader -> DecIPTTL -> Unstrip(14) -> ToDevice(out0);")
BROKEN = st.sampled_from([
    "FromDevice(in0) -> NoSuchElement -> ToDevice(out0);",
    "FromDevice(in0) -> Strip(14) -> CheckIPHeader -> IPFilter(allow src frob 1) -> ToDevice(out0);",
    "FromDevice(in0) -> ToDevice(out1);",
    "FromDevice(in0) -> Strip(14) -> IPFilter(allow udp -> ToDevice(out0);",
])
NF = st.one_of(firewall(), firewall(), napt(), load_balancer(), TTL, BROKEN)
MAC = st.one_of(st.just("02:00:00:00:00:02"), st.builds(lambda *b: ":".join(f"{x:02x}" for x in b),
                                                       *[st.integers(0, 255)] * 6))


def chain_json(name, point, egress):
    """A small chain that deploys: a firewall allowing UDP to 5000, which the switch runs alone."""
    return {"name": name,
            "nfs": [{"name": "fw", "click": "FromDevice(in0) -> Strip(14) -> CheckIPHeader -> IPFilter(allow udp dst "
                                            "port 5000, deny all) -> Unstrip(14) -> ToDevice(out0);"}],
            "links": [], "ingress": ["fw.in0"], "egress": ["fw.out0"],
            "deployment": {"tagType": "mac", "cpuCores": 1, "ingressPoint": point, "egressPoint": egress}}


def chain(points):
    point = st.sampled_from(points) if points else st.just("of:0000000000000001/1")

    @st.composite
    def build(draw, name=None):
        n = draw(st.integers(1, 3))
        kinds = ["fw", "napt", "lb"][:n] if n <= 3 else []
        nfs = [{"name": kinds[i] + str(i), "click": draw(NF)} for i in range(n)]
        deployment = {"tagType": draw(st.sampled_from(["mac", "vlan"])), "cpuCores": draw(st.integers(1, 2)),
                      "autoScale": draw(st.booleans()), "ingressPoint": draw(point), "egressPoint": draw(point),
                      "nics": 1}
        deployment["maxCpuCores"] = deployment["cpuCores"] + draw(st.integers(0, 1))
        if draw(st.integers(0, 3)) == 0:
            deployment["egressMac"] = draw(MAC)
        return {
            "name": name or "fz" + draw(st.from_regex(r"\A[a-z0-9]{1,10}\Z")),
            "nfs": nfs,
            "links": [{"from": f"{nfs[i]['name']}.out0", "to": f"{nfs[i + 1]['name']}.in0"} for i in range(n - 1)],
            "ingress": [nfs[0]["name"] + ".in0"],
            "egress": [nfs[-1]["name"] + ".out0"],
            "deployment": deployment,
        }
    return build


def no_headers(case):
    case.headers = None
    return case


def fault_of(response):
    """A refusal's fault as the API names it (the error body's "error"), else its status."""
    try:
        body = response.json()
    except ValueError:
        body = None
    return body["error"] if isinstance(body, dict) and body.get("error") else str(response.status_code)


# ---- running ----------------------------------------------------------------------------------------------------
class Run:
    def __init__(self, args):
        self.base = args.base_url.rstrip("/")
        self.auth = {"Authorization": "Basic " + base64.b64encode(args.auth.encode()).decode()}
        self.keep = set(args.keep.split(",")) if args.keep else set()
        self.points = [p for p in args.points.split(",") if p]
        self.requests = collections.Counter()
        self.statuses = collections.Counter()
        self.by_op = collections.defaultdict(collections.Counter)
        self.faults = collections.defaultdict(collections.Counter)  # per operation: refusals by the body's "error"
        self.failures = []
        self.cleanups = 0
        self.target = None
        doc = json.loads(self.http("GET", "/swagger.json"))
        # the document as served by the host under test; schemathesis validates it as Swagger 2.0 first
        self.schema = schemathesis.from_dict(doc, base_url=self.base, validate_schema=True, data_generation_methods=[
            DataGenerationMethod.positive, DataGenerationMethod.negative])

    def http(self, method, path, body=None):
        req = urllib.request.Request(self.base + path, method=method, data=body,
                                     headers=dict(self.auth, **{"Content-Type": "application/json"}))
        with urllib.request.urlopen(req, timeout=120) as r:
            return r.read().decode()

    def call(self, case):
        key = f"{case.operation.method.upper()} {case.operation.path}"
        started = time.monotonic()
        response = case.call(base_url=self.base, headers=self.auth, timeout=120)
        self.requests[key] += 1
        self.statuses[response.status_code] += 1
        self.by_op[key][response.status_code] += 1
        if 400 <= response.status_code < 500:
            self.faults[key][fault_of(response)] += 1
        try:
            case.validate_response(response, checks=CHECKS)
        except AssertionError as e:
            self.failures.append(f"{key} -> {response.status_code} ({time.monotonic() - started:.1f} s): "
                                 f"{str(e).strip().splitlines()[0]}\n    curl: {case.as_curl_command()}\n"
                                 f"    body: {response.text[:500]}")
        # a chain the fuzz brought up (submitted, or a FAILED one replaced) is removed at once: state stays small.
        # 202 too: in a cluster, an instance that does not own the chain records it and its owner brings it up
        if key in ("POST /chains", "PUT /chains/{name}") and response.status_code in (200, 201, 202) \
                and response.json()["name"] != self.target:
            self.remove(response.json()["name"])
        return response

    def remove(self, name):
        if name in self.keep:
            raise SystemExit(f"the fuzz created a chain named {name}, which it must not touch")
        self.http("DELETE", "/chains/" + name)
        self.cleanups += 1

    def strategy(self, op, key):
        base = op.as_strategy(data_generation_method=DataGenerationMethod.positive)
        # schema-violating bodies, paths and queries; no invented headers (the document declares none, and the
        # HTTP server refuses control characters in them before Metron sees the request)
        negative = op.as_strategy(data_generation_method=DataGenerationMethod.negative).map(no_headers)
        if key not in BODY_OPS:
            return st.one_of(base, negative) if op.path_parameters or op.query else base
        grammar = chain(self.points)

        @st.composite
        def real(draw):
            name = None
            params = {}
            if key == ("PUT", "/chains/{name}"):
                # half of the replacements are of the fuzz's own running chain: update's whole path
                name = self.target if self.target and draw(st.booleans()) else \
                    "fz" + draw(st.from_regex(r"\A[a-z0-9]{1,10}\Z"))
                params = {"name": name}
            return op.make_case(body=draw(grammar(name)), path_parameters=params or None,
                                media_type="application/json")
        # most cases are real chains; the rest is what the schema alone generates, valid and not
        return st.one_of(real(), real(), real(), base, negative)

    def fuzz(self, cases, seed):
        self.target = self.deploy_target()
        ops = [r.ok() for r in self.schema.get_all_operations()]
        plain = [op for op in ops if (op.method.upper(), op.path) not in WEIGHTS]
        bodies = [op for op in ops if (op.method.upper(), op.path) in WEIGHTS]
        each = max(1, int(cases * (1 - sum(WEIGHTS.values())) / max(1, len(plain))))
        try:
            for op in plain:
                self.hypothesis(op, each, seed)
            # what the quick operations did not use (a few have no parameters to vary) goes to the chain bodies
            left = max(0, cases - sum(self.requests.values()))
            for op in bodies:
                share = WEIGHTS[(op.method.upper(), op.path)] / sum(WEIGHTS.values())
                self.hypothesis(op, max(1, int(left * share + 1)), seed)
        finally:
            if self.target:
                try:
                    self.remove(self.target)
                except urllib.error.HTTPError as e:
                    self.failures.append(f"removing the fuzz's own chain {self.target}: HTTP {e.code} "
                                         f"{e.read().decode()[:300]}")

    def deploy_target(self):
        """A chain of the fuzz's own for PUT to replace (between the first two points that take it), or None."""
        self.target_refusals = []
        for point in self.points:
            for egress in self.points:
                if egress == point:
                    continue
                try:
                    self.http("POST", "/chains", json.dumps(chain_json("fzput", point, egress)).encode())
                    return "fzput"
                except urllib.error.HTTPError as e:
                    self.target_refusals.append(f"{point} -> {egress}: {e.code} {e.read().decode()[:200]}")
                    try:
                        self.http("DELETE", "/chains/fzput")  # left FAILED by the refusal
                    except urllib.error.HTTPError:
                        pass
        return None

    def hypothesis(self, op, n, seed):
        strategy = self.strategy(op, (op.method.upper(), op.path))

        @hypothesis.seed(seed)
        @settings(max_examples=n, deadline=None, database=None, phases=[Phase.generate],
                  suppress_health_check=list(HealthCheck), verbosity=hypothesis.Verbosity.quiet)
        @hypothesis.given(strategy)
        def run(case):
            self.call(case)
        run()

    def validate(self, chain):
        """Every operation once with real arguments, and the documented errors, each answer checked."""
        groups = json.loads(self.http("GET", "/scaling/" + chain))["groups"]
        doc_chain = json.loads(self.http("GET", "/chains/" + chain))["definition"]
        ops = {(r.ok().method.upper(), r.ok().path): r.ok() for r in self.schema.get_all_operations()}
        valid = dict(doc_chain, name="fzvalid")
        calls = [
            ("GET", "/chains", {}), ("GET", "/chains/{name}", {"path_parameters": {"name": chain}}),
            ("GET", "/chains/{name}", {"path_parameters": {"name": "fznothere"}}),
            ("GET", "/chains/{name}/classes", {"path_parameters": {"name": chain}}),
            ("GET", "/classes", {}), ("GET", "/tags", {}), ("GET", "/placements", {}), ("GET", "/servers", {}),
            ("GET", "/rules", {}), ("GET", "/rules", {"query": {"device": "of:0000000000000001"}}),
            ("GET", "/rules", {"query": {"device": "not a device"}}),
            ("GET", "/scaling", {}), ("GET", "/scaling/{chain}", {"path_parameters": {"chain": chain}}),
            ("GET", "/scaling/{chain}", {"path_parameters": {"chain": "fznothere"}}),
            ("GET", "/swagger.json", {}), ("GET", "/metrics", {}),
            ("POST", "/chains/validate", {"body": valid}),
            ("POST", "/chains/validate", {"body": dict(valid, nfs=[{"name": "x", "click": "Nope;"}])}),
            ("POST", "/chains", {"body": dict(doc_chain)}),  # the chain exists: 409
            ("POST", "/chains", {"body": dict(valid, links=[{"from": "nope.out0", "to": "x.in0"}])}),  # 422
            ("PUT", "/chains/{name}", {"path_parameters": {"name": "fznothere"}, "body": dict(valid, name="fznothere")}),
            ("DELETE", "/chains/{name}", {"path_parameters": {"name": "fznothere"}}),
            ("POST", "/scaling/{chain}/split", {"path_parameters": {"chain": chain}, "query": {"group": "nogroup"}}),
            ("POST", "/scaling/{chain}/merge", {"path_parameters": {"chain": chain},
                                                "query": {"keep": groups[0]["id"], "retire": "nogroup"}}),
            ("POST", "/scaling/{chain}/split", {"path_parameters": {"chain": "fznothere"}, "query": {"group": "g0"}}),
            # a drain moves every chain off a server: only its documented refusal (unknown server, 400) is asked here,
            # so the validation changes nothing the fuzz's other calls rely on
            ("POST", "/servers/{server}/drain", {"path_parameters": {"server": "metron:fznothere"}}),
            ("POST", "/servers/{server}/undrain", {"path_parameters": {"server": "metron:fznothere"}}),
        ]
        for method, path, kw in calls:
            self.call(ops[(method, path)].make_case(media_type="application/json" if "body" in kw else None, **kw))
        # malformed JSON: 400 with line:col
        case = ops[("POST", "/chains")].make_case(body='{"name": ', media_type="application/json")
        self.call(case)
        missing = sorted(f"{m} {p}" for m, p in ops if not any(c[0] == m and c[1] == p for c in calls))
        if missing:
            self.failures.append(f"operations --validate does not call: {missing}")

    def report(self, label):
        total = sum(self.requests.values())
        server_errors = sum(n for s, n in self.statuses.items() if s >= 500)
        print(f"openapi {label}: {total} requests over {len(self.requests)} operations, statuses "
              f"{dict(sorted(self.statuses.items()))}, {server_errors} server errors, {len(self.failures)} "
              f"nonconforming; {self.cleanups} fuzz-deployed chains removed"
              + (f", PUT replaced the fuzz's own chain {self.target}" if self.target else
                 f", no chain of its own for PUT to replace ({len(getattr(self, 'target_refusals', []))} "
                 "placements refused)"))
        # per operation, the share the API refused (4xx): where it is most, generated bodies mostly miss what the
        # document asks for (or the document does not state what the API checks)
        for k, n in sorted(self.requests.items()):
            refused = sum(c for s, c in self.by_op[k].items() if 400 <= s < 500)
            why = ", ".join(f"{f} {c}" for f, c in self.faults[k].most_common(3))
            print(f"  {n:6d}  {k:<32} refused {refused:4d} ({100 * refused / n:3.0f} %)  "
                  f"{dict(sorted(self.by_op[k].items()))}" + (f"  [{why}]" if why else ""))
        for f in self.failures[:20]:
            print("FAIL", f)
        return total, server_errors


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--base-url", required=True)
    ap.add_argument("--auth", required=True, help="user:password (HTTP Basic)")
    ap.add_argument("--cases", type=int, default=300)
    ap.add_argument("--seed", type=int, default=int(time.time()))
    ap.add_argument("--points", default="", help="connect points chains may name, comma-separated")
    ap.add_argument("--keep", default="", help="chains the fuzz must leave alone, comma-separated")
    ap.add_argument("--validate", metavar="CHAIN", help="check real answers about this chain instead of fuzzing")
    a = ap.parse_args(argv)
    run = Run(a)
    if a.validate:
        run.validate(a.validate)
        run.report("validation")
        return 1 if run.failures else 0
    print(f"openapi fuzz: seed {a.seed}, {a.cases} cases asked", flush=True)
    started = time.monotonic()
    run.fuzz(a.cases, a.seed)
    total, server_errors = run.report(f"fuzz ({time.monotonic() - started:.0f} s)")
    return 1 if run.failures or server_errors or total < a.cases else 0


if __name__ == "__main__":
    sys.exit(main())
