package org.metron.embedded.bench;

import org.metron.openflow.FlowRuleTranslator;
import org.metron.openflow.OfSwitch;
import org.metron.openflow.OpenFlowController;
import org.metron.embedded.topology.EmulatedNetwork;
import org.onlab.packet.Ethernet;
import org.onlab.packet.IPv4;
import org.onlab.packet.IpPrefix;
import org.onlab.packet.MacAddress;
import org.onlab.packet.TpPort;
import org.onosproject.core.DefaultApplicationId;
import org.onosproject.net.DeviceId;
import org.onosproject.net.PortNumber;
import org.onosproject.net.flow.DefaultFlowRule;
import org.onosproject.net.flow.DefaultTrafficSelector;
import org.onosproject.net.flow.DefaultTrafficTreatment;
import org.onosproject.net.flow.FlowRule;
import org.projectfloodlight.openflow.protocol.OFFlowMod;
import org.projectfloodlight.openflow.types.DatapathId;

import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;

/**
 * Time to make N offloaded firewall rules live on a real OVS bridge through the embedded host's southbound
 * (one atomic ONF bundle over OpenFlow 1.3, until the commit is acknowledged), side by side with
 * {@code ovs-ofctl --bundle add-flows} of the same rules, interleaved, medians of several rounds.
 * Usage: RuleInstallBench OUT_DIR [N ...]
 */
public final class RuleInstallBench {
    /** make test's bench smoke (-Dmetron.bench.smoke=true): one round, to prove the bench still runs. */
    private static final boolean SMOKE = Boolean.getBoolean("metron.bench.smoke");
    private static final int ROUNDS = SMOKE ? 1 : 7;
    private static final DeviceId S1 = DeviceId.deviceId("of:0000000000000001");

    private RuleInstallBench() {
    }

    /** Firewall-like offload rules: distinct /32 sources, TCP destination ports, tag + output to the server. */
    static List<FlowRule> rules(int n) {
        List<FlowRule> out = new ArrayList<>(n);
        DefaultApplicationId app = new DefaultApplicationId(1, "org.metron.bench");
        for (int i = 0; i < n; i++) {
            out.add(DefaultFlowRule.builder().forDevice(S1).fromApp(app).withPriority(40000 - i).makePermanent()
                    .withSelector(DefaultTrafficSelector.builder().matchInPort(PortNumber.portNumber(1))
                            .matchEthType(Ethernet.TYPE_IPV4).matchIPProtocol(IPv4.PROTOCOL_TCP)
                            .matchIPSrc(IpPrefix.valueOf(0x0a000000 | (i >> 8 << 8) | (i & 0xff) | 0x10000, 32))
                            .matchTcpDst(TpPort.tpPort(1 + i % 60000)).build())
                    .withTreatment(DefaultTrafficTreatment.builder()
                            .setEthDst(MacAddress.valueOf(0x024d00010000L | (i & 0xffff)))
                            .setOutput(PortNumber.portNumber(2)).build())
                    .build());
        }
        return out;
    }

    static String ofctlText(List<FlowRule> rules) {
        StringBuilder sb = new StringBuilder();
        for (FlowRule r : rules) {
            String ip = r.selector().getCriterion(org.onosproject.net.flow.criteria.Criterion.Type.IPV4_SRC)
                    .toString().replaceAll(".*:", "").replace("/32", "");
            String port = r.selector().getCriterion(org.onosproject.net.flow.criteria.Criterion.Type.TCP_DST)
                    .toString().replaceAll(".*:", "");
            String mac = r.treatment().allInstructions().get(0).toString().replaceAll("^.*?:", "")
                    .replaceAll("[^0-9A-Fa-f:]", "");
            sb.append(String.format("cookie=0x%x,priority=%d,in_port=1,tcp,nw_src=%s,tp_dst=%s,"
                    + "actions=set_field:%s->eth_dst,output:2%n", r.id().value(), r.priority(), ip, port,
                    mac.toLowerCase()));
        }
        return sb.toString();
    }

    public static void main(String[] args) throws Exception {
        Path out = Paths.get(args[0]);
        int[] sizes = args.length > 1 ? Arrays.stream(args, 1, args.length).mapToInt(Integer::parseInt).toArray()
                : new int[]{1000, 4000};
        Files.createDirectories(out);
        Path tmp = Files.createTempDirectory("metron-bench");
        try (OpenFlowController controller = OpenFlowController.listen(new InetSocketAddress("127.0.0.1", 0),
                                                                        30_000);
             EmulatedNetwork net = EmulatedNetwork.up("single", controller.port(), tmp.resolve("run"))) {
            OfSwitch sw = controller.await(DatapathId.of(1), 20_000);
            FlowRuleTranslator tr = new FlowRuleTranslator(sw.factory());
            for (int n : sizes) {
                List<FlowRule> rules = rules(n);
                Path file = tmp.resolve("rules-" + n + ".txt");
                Files.writeString(file, ofctlText(rules));
                List<Double> ours = new ArrayList<>();
                List<Double> base = new ArrayList<>();
                for (int round = -2; round < ROUNDS; round++) {  // two warm-up rounds
                    clear(sw, tr);
                    long t0 = System.nanoTime();
                    List<OFFlowMod> mods = rules.stream().map(tr::add).collect(Collectors.toList());
                    sw.sendAtomically(mods).join();
                    double oursMs = (System.nanoTime() - t0) / 1e6;
                    check(sw, n);
                    clear(sw, tr);
                    t0 = System.nanoTime();
                    net.ofctl("s1", "add-flows", file.toString(), "--bundle");
                    double baseMs = (System.nanoTime() - t0) / 1e6;
                    check(sw, n);
                    if (round >= 0) {
                        ours.add(oursMs);
                        base.add(baseMs);
                    }
                }
                double v = median(ours);
                double b = median(base);
                String json = String.format("{\"name\": \"e2e_offload_rules_%d\", "
                        + "\"description\": \"offload %d rules live on OVS\", \"value\": %.1f, "
                        + "\"unit\": \"ms\", \"baseline\": \"ovs-ofctl --bundle add-flows\", \"baseline_value\": %.1f, "
                        + "\"ratio\": %.2f, \"machine\": \"%s\", \"samples\": %s, \"baseline_samples\": %s}%n",
                        n, n, v, b, v / b, Machine.describe(), fmt(ours), fmt(base));
                Files.writeString(out.resolve("e2e_offload_rules_" + n + ".json"), json);
                System.out.print(json);
            }
            clear(sw, tr);
        } finally {
            deleteTree(tmp);
        }
    }

    private static void clear(OfSwitch sw, FlowRuleTranslator tr) {
        sw.send(List.of(tr.deleteAll())).join();
    }

    private static void check(OfSwitch sw, int n) {
        int live = sw.flowStats().join().size();
        if (live != n) {
            throw new IllegalStateException("expected " + n + " rules live on the switch, found " + live);
        }
    }

    static double median(List<Double> xs) {
        List<Double> s = new ArrayList<>(xs);
        s.sort(null);
        int m = s.size() / 2;
        return s.size() % 2 == 1 ? s.get(m) : (s.get(m - 1) + s.get(m)) / 2;
    }

    private static String fmt(List<Double> xs) {
        return xs.stream().map(x -> String.format("%.1f", x)).collect(Collectors.joining(", ", "[", "]"));
    }

    private static void deleteTree(Path p) throws java.io.IOException {
        if (Files.exists(p)) {
            try (var walk = Files.walk(p)) {
                walk.sorted(java.util.Comparator.reverseOrder()).forEach(x -> x.toFile().delete());
            }
        }
    }
}
