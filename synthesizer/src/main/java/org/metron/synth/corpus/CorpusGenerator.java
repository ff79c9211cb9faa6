package org.metron.synth.corpus;

import org.metron.synth.ChainLink;
import org.metron.synth.ChainSpec;
import org.metron.synth.Deployment;
import org.metron.synth.InterfaceRef;
import org.metron.synth.NfSpec;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * Seeded generator of the synthesizer corpus (synthesizer/corpus/*.json): campus/ISP-style firewalls
 * (overlapping prefixes, port ranges and relations, protocols, allow/deny, IPv4 and IPv6, a default rule),
 * an ACL, a router with thousands of routes, NAPT, a round-robin load balancer and a DPI with Snort-like
 * signatures, composed into the paper's chains. Same seed, same bytes.
 */
public final class CorpusGenerator {
    private CorpusGenerator() {
    }

    // ---- NFs ------------------------------------------------------------------------------------------------

    /** A firewall of n rules plus a default rule, IPFilter syntax. */
    public static String firewall(int n, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        StringBuilder sb = new StringBuilder("// campus/ISP firewall, " + n + " rules + default, seed " + seed + "\n");
        sb.append("FromDevice(in0) -> Strip(14) -> CheckIPHeader -> fw :: IPFilter(\n");
        for (int i = 0; i < n; i++) {
            sb.append("  ").append(r.nextInt(100) < 55 ? "allow " : "deny ").append(fwPattern(r)).append(",\n");
        }
        sb.append("  ").append(seed % 2 == 0 ? "deny all" : "allow all").append(")\n");
        sb.append("-> Unstrip(14) -> ToDevice(out0);\n");
        return sb.toString();
    }

    private static String fwPattern(SplittableRandom r) {
        List<String> terms = new ArrayList<>();
        boolean v6 = r.nextInt(100) < 15;
        int kind = r.nextInt(100);
        if (kind < 70) {
            terms.add(r.nextBoolean() ? "src net " + prefix(r, v6) : "src host " + host(r, v6));
        }
        if (kind > 20) {
            terms.add(r.nextInt(4) == 0 ? "dst host " + host(r, v6) : "dst net " + prefix(r, v6));
        }
        int proto = r.nextInt(100);
        if (proto < 45) {
            terms.add("tcp " + port(r));
            if (r.nextInt(20) == 0) {
                terms.add("tcp opt syn and not tcp opt ack");
            }
        } else if (proto < 75) {
            terms.add("udp " + port(r));
        } else if (proto < 82) {
            terms.add(r.nextBoolean() ? "icmp" : "icmp type " + (r.nextBoolean() ? "echo" : "8"));
        } else if (proto < 88) {
            terms.add("(tcp or udp) and " + port(r));
        } else if (proto < 92) {
            terms.add("ip proto " + (r.nextBoolean() ? "gre" : "50"));
        }
        if (r.nextInt(25) == 0) {
            terms.add("not src net " + prefix(r, v6));
        }
        if (r.nextInt(40) == 0) {
            terms.add("ip ttl < " + (2 + r.nextInt(10)));
        }
        if (terms.isEmpty()) {
            terms.add(v6 ? "ip vers 6" : "dst net " + prefix(r, false));
        }
        return String.join(" and ", terms);
    }

    private static String port(SplittableRandom r) {
        int[] common = {22, 25, 53, 80, 110, 123, 143, 443, 993, 3306, 5432, 8080, 8443};
        switch (r.nextInt(6)) {
            case 0:
                return "dst port " + (1024 + r.nextInt(3000)) + "-" + (4100 + r.nextInt(60000));
            case 1:
                return "dst port > " + (1023 + r.nextInt(40000));
            case 2:
                return "src port " + common[r.nextInt(common.length)] + " or dst port "
                        + common[r.nextInt(common.length)];
            default:
                return "dst port " + common[r.nextInt(common.length)];
        }
    }

    private static String prefix(SplittableRandom r, boolean v6) {
        if (v6) {
            int len = 32 + 8 * r.nextInt(10);
            return String.format(Locale.ROOT, "2001:db8:%x:%x::/%d", r.nextInt(8), r.nextInt(4) * 0x100, Math.min(len, 64));
        }
        int len = new int[] {8, 12, 16, 16, 20, 24, 24, 24, 28, 32}[r.nextInt(10)];
        long a = campus(r);
        long mask = len == 0 ? 0 : (0xffffffffL << (32 - len)) & 0xffffffffL;
        return ip4(a & mask) + "/" + len;
    }

    private static String host(SplittableRandom r, boolean v6) {
        if (v6) {
            return String.format(Locale.ROOT, "2001:db8:%x:%x::%x", r.nextInt(8), r.nextInt(4) * 0x100, 1 + r.nextInt(200));
        }
        return ip4(campus(r));
    }

    /** Addresses cluster in a few campus blocks so prefixes overlap and nest. */
    private static long campus(SplittableRandom r) {
        long[] bases = {0x0a000000L, 0x0a010000L, 0x0a140000L, 0xac100000L, 0xc0a80000L, 0xc6336400L};
        long base = bases[r.nextInt(bases.length)];
        return r.nextInt(6) == 0 ? r.nextLong() & 0xffffffffL : base | (r.nextInt(1 << 16) & 0xffffL);
    }

    private static String ip4(long a) {
        return ((a >>> 24) & 0xff) + "." + ((a >>> 16) & 0xff) + "." + ((a >>> 8) & 0xff) + "." + (a & 0xff);
    }

    /** An ACL: specific host/service rules (allow-list style) with a deny default. */
    public static String acl(int n, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        StringBuilder sb = new StringBuilder("// ACL, " + n + " rules + default, seed " + seed + "\n");
        sb.append("FromDevice(in0) -> Strip(14) -> CheckIPHeader -> acl :: IPFilter(\n");
        String[] svc = {"tcp dst port 80", "tcp dst port 443", "udp dst port 53", "tcp dst port 22",
            "tcp dst port 3306", "udp dst port 123", "tcp dst port 8000-8999"};
        for (int i = 0; i < n; i++) {
            boolean v6 = r.nextInt(10) == 0;
            sb.append("  ").append(r.nextInt(10) < 8 ? "allow " : "deny ").append("src net ").append(prefix(r, v6))
                    .append(" and dst host ").append(host(r, v6)).append(" and ").append(svc[r.nextInt(svc.length)])
                    .append(",\n");
        }
        sb.append("  deny all)\n-> Unstrip(14) -> ToDevice(out0);\n");
        return sb.toString();
    }

    /** A router: n IPv4 routes (plus a few IPv6) over four next hops and a blackhole, then TTL and MACs. */
    public static String router(int n, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        StringBuilder sb = new StringBuilder("// router, " + n + " routes, seed " + seed + "\n");
        sb.append("rt :: LookupIPRoute(\n");
        java.util.Set<String> seen = new java.util.HashSet<>();
        int made = 0;
        while (made < n) {
            int len = 8 + r.nextInt(25);
            long a = r.nextLong() & 0xffffffffL;
            long mask = (0xffffffffL << (32 - len)) & 0xffffffffL;
            String p = ip4(a & mask) + "/" + len;
            if (seen.add(p)) {
                sb.append("  ").append(p).append(' ').append(r.nextInt(5)).append(",\n");
                made++;
            }
        }
        sb.append("  0.0.0.0/0 0,\n  2001:db8::/32 1,\n  2001:db8:1::/48 2,\n  ::/0 3);\n");
        sb.append("FromDevice(in0) -> Strip(14) -> CheckIPHeader -> rt;\n");
        for (int k = 0; k < 4; k++) {
            sb.append("rt[").append(k).append("] -> DecIPTTL -> Unstrip(14) -> EtherRewrite(02:00:00:00:01:00, ")
                    .append(String.format(Locale.ROOT, "02:00:00:00:02:%02x", k)).append(") -> ToDevice(out0);\n");
        }
        sb.append("rt[4] -> Discard;\n");
        return sb.toString();
    }

    /** NAPT for both families: one source pattern each, ports allocated from a range. */
    public static String napt() {
        return "// NAPT: IPv4 and IPv6 sources rewritten to one public address each\n"
                + "out :: Unstrip(14) -> ToDevice(out0);\n"
                + "FromDevice(in0) -> Strip(14) -> CheckIPHeader -> fam :: IPClassifier(ip vers 4, ip vers 6);\n"
                + "fam[0] -> nat4 :: IPRewriter(pattern 203.0.113.1 1024-65535 - - 0 1, drop) -> out;\n"
                + "fam[1] -> nat6 :: IPRewriter(pattern 2001:db8:ffff::1 1024-65535 - - 0 1, drop) -> out;\n";
    }

    /** The NAPT with its reply direction: replies enter at in1, meet the mappings (input 1), leave at out1. */
    public static String naptWithReplies() {
        return napt() + "// replies: restored by the mappings, dropped without one\n"
                + "back :: Unstrip(14) -> ToDevice(out1);\n"
                + "FromDevice(in1) -> Strip(14) -> CheckIPHeader -> rfam :: IPClassifier(ip vers 4, ip vers 6);\n"
                + "rfam[0] -> [1]nat4[1] -> back;\nrfam[1] -> [1]nat6[1] -> back;\n";
    }

    /** Round-robin LB of web traffic over three backends per family; other traffic passes. */
    public static String lb() {
        return "// round-robin load balancer for tcp/80\n"
                + "rr4 :: RoundRobinIPMapper(- - 10.10.0.1 8080 0 1, - - 10.10.0.2 8080 0 1, - - 10.10.0.3 8080 0 1);\n"
                + "rr6 :: RoundRobinIPMapper(- - 2001:db8:10::1 8080 0 1, - - 2001:db8:10::2 8080 0 1,"
                + " - - 2001:db8:10::3 8080 0 1);\n"
                + "out :: Unstrip(14) -> ToDevice(out0);\n"
                + "FromDevice(in0) -> Strip(14) -> CheckIPHeader\n"
                + "  -> web :: IPClassifier(ip vers 4 and tcp dst port 80, ip vers 6 and tcp dst port 80, -);\n"
                + "web[0] -> lb4 :: IPRewriter(rr4, drop) -> out;\n"
                + "web[1] -> lb6 :: IPRewriter(rr6, drop) -> out;\n"
                + "web[2] -> out;\n";
    }

    /** The LB with its reply direction: backend replies meet the LB mappings, other replies pass. */
    public static String lbWithReplies() {
        return lb() + "// replies: from a backend's 8080 to the LB mappings, the rest passes\n"
                + "back :: Unstrip(14) -> ToDevice(out1);\n"
                + "FromDevice(in1) -> Strip(14) -> CheckIPHeader -> rweb :: IPClassifier(\n"
                + "  ip vers 4 and src net 10.10.0.0/24 and tcp src port 8080,\n"
                + "  ip vers 6 and src net 2001:db8:10::/64 and tcp src port 8080, -);\n"
                + "rweb[0] -> [1]lb4[1] -> back;\nrweb[1] -> [1]lb6[1] -> back;\nrweb[2] -> back;\n";
    }

    /** A firewall whose reply direction (in1 -> out1) drops replies with a reserved TOS. */
    public static String firewallWithReplies(int n, long seed) {
        return firewall(n, seed) + "// replies\nFromDevice(in1) -> Strip(14) -> CheckIPHeader\n"
                + "  -> IPFilter(deny ip tos 255, allow all) -> Unstrip(14) -> ToDevice(out1);\n";
    }

    /** DPI with Snort-like content strings and regular expressions; matches are dropped. */
    public static String dpi(long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        String[] contents = {"/etc/passwd", "cmd.exe", "<script>", "UNION SELECT", "../../", "wget http",
            "/bin/sh", "xp_cmdshell", "eval(base64_decode", "SSH-1.", "\\x90\\x90\\x90\\x90", "X5O!P%@AP"};
        StringBuilder sb = new StringBuilder("// DPI: Snort-like content and pcre signatures, seed " + seed + "\n");
        sb.append("FromDevice(in0) -> Strip(14) -> CheckIPHeader -> dpi :: DPI(");
        List<String> sigs = new ArrayList<>();
        for (String c : contents) {
            sigs.add("\"" + c.replace("\"", "\\\"") + "\"");
        }
        sigs.add("/GET \\/[a-z]+\\.php\\?id=[0-9]+%27/");
        sigs.add("/User-Agent: (sqlmap|nikto)/");
        for (int i = 0; i < 8; i++) {
            sigs.add("\"sig" + Integer.toHexString(r.nextInt(1 << 16)) + "\"");
        }
        sb.append(String.join(", ", sigs)).append(");\n");
        sb.append("dpi[0] -> Unstrip(14) -> ToDevice(out0);\ndpi[1] -> Discard;\n");
        return sb.toString();
    }

    // ---- chains ---------------------------------------------------------------------------------------------

    /** A linear chain nf0 -> nf1 -> ... over out0/in0, ingress first.in0, egress last.out0. */
    public static ChainSpec linear(String name, String[] names, String[] clicks) {
        List<NfSpec> nfs = new ArrayList<>();
        List<ChainLink> links = new ArrayList<>();
        for (int i = 0; i < names.length; i++) {
            nfs.add(NfSpec.of(names[i], clicks[i]));
            if (i > 0) {
                links.add(ChainLink.of(InterfaceRef.of(names[i - 1], "out0"), InterfaceRef.of(names[i], "in0")));
            }
        }
        return new ChainSpec(name, nfs, links, List.of(InterfaceRef.of(names[0], "in0")),
                List.of(InterfaceRef.of(names[names.length - 1], "out0")), Deployment.DEFAULT);
    }

    /** FW(n) -> NAPT -> LB, the benchmark chain. */
    public static ChainSpec fwNaptLb(int rules, long seed) {
        return linear("fw" + rules + "-napt-lb", new String[] {"fw", "napt", "lb"},
                new String[] {firewall(rules, seed), napt(), lb()});
    }

    /**
     * FW(n) -> NAPT -> LB with replies: forward traffic enters fw.in0 and leaves lb.out0; replies enter lb.in1,
     * pass lb, napt and fw back to front (through the rewriters' reply inputs) and leave fw.out1.
     */
    public static ChainSpec fwNaptLbReplies(int rules, long seed) {
        List<NfSpec> nfs = List.of(NfSpec.of("fw", firewallWithReplies(rules, seed)),
                NfSpec.of("napt", naptWithReplies()), NfSpec.of("lb", lbWithReplies()));
        List<ChainLink> links = List.of(
                ChainLink.of(InterfaceRef.of("fw", "out0"), InterfaceRef.of("napt", "in0")),
                ChainLink.of(InterfaceRef.of("napt", "out0"), InterfaceRef.of("lb", "in0")),
                ChainLink.of(InterfaceRef.of("lb", "out1"), InterfaceRef.of("napt", "in1")),
                ChainLink.of(InterfaceRef.of("napt", "out1"), InterfaceRef.of("fw", "in1")));
        return new ChainSpec("fw" + rules + "-napt-lb-replies", nfs, links,
                List.of(InterfaceRef.of("fw", "in0"), InterfaceRef.of("lb", "in1")),
                List.of(InterfaceRef.of("lb", "out0"), InterfaceRef.of("fw", "out1")), Deployment.DEFAULT);
    }

    /** The corpus: name -> chain. */
    public static List<ChainSpec> corpus() {
        List<ChainSpec> out = new ArrayList<>();
        out.add(linear("fw1000", new String[] {"fw"}, new String[] {firewall(1000, 1)}));
        out.add(linear("fw4000", new String[] {"fw"}, new String[] {firewall(4000, 2)}));
        out.add(linear("fw-dpi", new String[] {"fw", "dpi"}, new String[] {firewall(1000, 3), dpi(4)}));
        out.add(fwNaptLb(1000, 5));
        out.add(linear("router-napt-lb", new String[] {"router", "napt", "lb"},
                new String[] {router(3117, 6), napt(), lb()}));
        out.add(linear("acl-napt", new String[] {"acl", "napt"}, new String[] {acl(725, 7), napt()}));
        out.add(fwNaptLbReplies(500, 8));
        return out;
    }

    /** Writes the corpus as chain JSON files into a directory (default synthesizer/corpus). */
    public static void main(String[] args) throws IOException {
        Path dir = Paths.get(args.length > 0 ? args[0] : "synthesizer/corpus");
        Files.createDirectories(dir);
        for (ChainSpec c : corpus()) {
            Path p = dir.resolve(c.name() + ".json");
            Files.write(p, c.toJson().getBytes(StandardCharsets.UTF_8));
            System.out.println("wrote " + p);
        }
    }
}
