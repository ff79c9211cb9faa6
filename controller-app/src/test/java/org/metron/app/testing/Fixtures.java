package org.metron.app.testing;

import org.metron.agent.v1.DispatchMode;
import org.metron.agent.v1.TagType;
import org.metron.app.impl.ChainManager;
import org.metron.app.impl.Deployer;
import org.metron.app.impl.PlacementEngine;
import org.metron.app.impl.RulePlanner;
import org.metron.app.impl.Synthesis;
import org.metron.app.local.LocalStoreFactory;
import org.metron.app.local.SingleInstanceLeadership;
import org.metron.app.scaling.IngressWatch;
import org.metron.app.scaling.LoadMonitor;
import org.metron.app.scaling.ScalingManager;
import org.metron.app.scaling.ScalingPolicy;
import org.metron.app.spi.DeviceRole;
import org.metron.app.spi.MetronServer;
import org.metron.app.spi.Leadership;
import org.metron.app.spi.StoreFactory;
import org.metron.app.store.ChainStore;
import org.metron.synth.ClassGroup;
import org.metron.synth.CompiledChain;
import org.metron.synth.HeaderWrite;
import org.metron.synth.IpPrefix;
import org.metron.synth.MatchField;
import org.metron.synth.OffloadRule;
import org.metron.synth.RangeMatch;
import org.metron.synth.RuleAction;
import org.metron.synth.RuleMatch;
import org.metron.synth.SynthStats;
import org.metron.synth.SynthesisException;
import org.metron.synth.TargetProfile;
import org.metron.synth.TrafficClass;
import org.onosproject.core.ApplicationId;
import org.onosproject.core.DefaultApplicationId;
import org.onosproject.net.ConnectPoint;
import org.onosproject.net.DeviceId;

import java.math.BigInteger;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;

/**
 * A small Metron network: ingress switch s1 (port 1 in, port 3 out), core switch s2 (s1:2 - s2:1), servers
 * with NIC eth0 on s2 port 10+i and eth1 on s2 port 20+i; and a three-class chain as the synthesizer
 * compiles it.
 */
public final class Fixtures {
    public static final String S1 = "of:0000000000000001";
    public static final String S2 = "of:0000000000000002";
    public static final DeviceId D1 = DeviceId.deviceId(S1);
    public static final DeviceId D2 = DeviceId.deviceId(S2);
    public static final ApplicationId APP = new DefaultApplicationId(7, "org.metron.app");

    private Fixtures() {
    }

    /**
     * A chain the switches handle alone: forward UDP leaves at egress 0 (class 0), UDP replies from port 53 enter
     * at the reply ingress and leave at egress 1 (class 1), each by the one rule that classifies it; the rest is
     * dropped.
     */
    public static CompiledChain switchOnlyUdpWithReplies() {
        List<TrafficClass> classes = List.of(
                new TrafficClass(0, List.of("udp"), 0, List.of(), false, "", "fw: allow"),
                new TrafficClass(1, List.of("udp src port 53"), 1, List.of(), false, "", "reply: egress 1"));
        RuleMatch udp = RuleMatch.builder().ethType(0x0800).ipProto(17).build();
        return new CompiledChain("c", TargetProfile.OPENFLOW13, classes, List.of(),
                List.of(OffloadRule.of(2, udp, RuleAction.toEgress(0, List.of(), false)),
                        OffloadRule.of(1, RuleMatch.builder().build(), RuleAction.drop())),
                List.of(OffloadRule.of(2, RuleMatch.builder().ethType(0x0800).ipProto(17).l4Src(RangeMatch.exact(53,
                        16)).build(), RuleAction.toEgress(1, List.of(), false)),
                        OffloadRule.of(1, RuleMatch.builder().build(), RuleAction.drop())),
                List.of("fw.out0", "fw.out1"), new SynthStats(2, 2, 4, 0, Map.of()));
    }

    public static String serverId(int i) {
        return "metron:server" + i;
    }

    /** The standard topology with {@code servers} servers (not yet registered). */
    public static TestNetwork network(int servers) {
        TestNetwork n = new TestNetwork().device(S1, DeviceRole.OPENFLOW_SWITCH, 1000)
                .device(S2, DeviceRole.OPENFLOW_SWITCH, 1000).cable(S1, 2, S2, 1);
        for (int i = 0; i < servers; i++) {
            n.device(serverId(i), DeviceRole.SERVER, 0).cable(S2, 10 + i, serverId(i), 1)
                    .cable(S2, 20 + i, serverId(i), 2);
        }
        return n;
    }

    public static MetronServer server(int i, TestAgent agent) {
        return new MetronServer(DeviceId.deviceId(serverId(i)), agent,
                Map.of("eth0", ConnectPoint.deviceConnectPoint(S2 + "/" + (10 + i)),
                        "eth1", ConnectPoint.deviceConnectPoint(S2 + "/" + (20 + i))));
    }

    /** A world: network, switches, servers with agents, store and the manager wired like the ONOS component. */
    public static final class World {
        public final TestNetwork network;
        public final TestSwitches switches = new TestSwitches();
        public final TestServers servers = new TestServers();
        public final List<TestAgent> agents = new ArrayList<>();
        public final ChainStore store;
        /** The world's one leadership: the chain and scaling managers share it, as the hosts do (its term fences). */
        public final Leadership leadership;
        public final ChainManager manager;

        public World(int n, Synthesis synthesis, long seed) {
            this(n, synthesis, seed, DispatchMode.DISPATCH_FANOUT_CBPF, TagType.TAG_MAC, TagType.TAG_VLAN);
        }

        /** A world whose chain manager owns its chains by {@code leadership}. */
        public World(int n, Synthesis synthesis, long seed, Leadership leadership) {
            this(n, synthesis, seed, new LocalStoreFactory(), leadership, DispatchMode.DISPATCH_FANOUT_CBPF,
                    TagType.TAG_MAC, TagType.TAG_VLAN);
        }

        /** A world whose store's maps {@code factory} makes (one that counts writes, say). */
        public World(int n, Synthesis synthesis, long seed, StoreFactory factory) {
            this(n, synthesis, seed, factory, new SingleInstanceLeadership(), DispatchMode.DISPATCH_FANOUT_CBPF,
                    TagType.TAG_MAC, TagType.TAG_VLAN);
        }

        /** A world whose servers' NICs all dispatch in {@code mode}, steering {@code tagTypes}. */
        public World(int n, Synthesis synthesis, long seed, DispatchMode mode, TagType... tagTypes) {
            this(n, synthesis, seed, new LocalStoreFactory(), new SingleInstanceLeadership(), mode, tagTypes);
        }

        private World(int n, Synthesis synthesis, long seed, StoreFactory factory, Leadership leadership,
                      DispatchMode mode, TagType... tagTypes) {
            this.leadership = leadership;
            store = new ChainStore(factory, switches);
            network = network(n);
            for (int i = 0; i < n; i++) {
                TestAgent a = new TestAgent("10.0.0." + (i + 1) + ":50051", 4, 0.1 * (i + 1))
                        .nic("eth0", true, 128, mode, tagTypes).nic("eth1", true, 128, mode, tagTypes);
                agents.add(a);
                servers.add(server(i, a));
            }
            PlacementEngine placement = new PlacementEngine(servers, network, switches, new Random(seed),
                    Duration.ofSeconds(2));
            manager = new ChainManager(store, servers, switches, leadership, placement,
                    new RulePlanner(APP, network), new Deployer(switches, Duration.ofSeconds(2)),
                    Duration.ofSeconds(2), synthesis);
        }
    }

    /** A scaling manager over a world (not started), its history in {@code factory}'s maps. */
    public static ScalingManager scaling(World w, StoreFactory factory) {
        return new ScalingManager(w.store, factory, w.servers, w.switches, w.manager, w.manager, APP,
                Duration.ofSeconds(2), ScalingPolicy.Params.DEFAULT, LoadMonitor.INTERVAL_MS, w.leadership,
                System::currentTimeMillis, Optional.empty(), IngressWatch.INTERVAL_MS);
    }

    /** Chain JSON in the contracts format, entering at s1 port 1. */
    public static String chainJson(String name, String tagType, int cores, int nics) {
        return chainJsonAt(name, tagType, cores, nics, 1);
    }

    /** Chain JSON entering at s1 port {@code ingressPort} (one chain per ingress point). */
    public static String chainJsonAt(String name, String tagType, int cores, int nics, int ingressPort) {
        return "{\"name\": \"" + name + "\", \"nfs\": [{\"name\": \"fw\", \"click\": "
                + "\"FromDevice(in0) -> Strip(14) -> CheckIPHeader -> IPFilter(allow tcp dst port 80, allow udp, deny all)"
                + " -> Unstrip(14) -> ToDevice(out0);\"}],"
                + " \"links\": [], \"ingress\": [\"fw.in0\"], \"egress\": [\"fw.out0\"],"
                + " \"deployment\": {\"tagType\": \"" + tagType + "\", \"cpuCores\": " + cores
                + ", \"maxCpuCores\": " + Math.max(4, cores) + ", \"ingressPoint\": \"" + S1 + "/" + ingressPort + "\", \"egressPoint\": \"" + S1 + "/3\","
                + " \"nics\": " + nics + "}}";
    }

    public static String chainJson(String name) {
        return chainJson(name, "mac", 1, 1);
    }

    public static String chainJsonAt(String name, int ingressPort) {
        return chainJsonAt(name, "mac", 1, 1, ingressPort);
    }

    /**
     * The compiled form of {@link #chainJson}: class 0 = TCP to port 80 (stateful, group 0), class 1 = UDP
     * (stateful, group 1, which also classifies in software), class 2 = everything else (dropped). For
     * profiles that offload nothing, the offload rule list is empty.
     */
    public static CompiledChain compiled(String name, TargetProfile profile) {
        List<TrafficClass> classes = List.of(
                new TrafficClass(0, List.of("tcp dst port 80"), 0, List.of(), false, "napt", "fw: allow; napt"),
                new TrafficClass(1, List.of("udp"), 0, List.of(), false, "lb", "fw: allow; lb"),
                new TrafficClass(2, List.of("-"), -1, List.of(), false, "", "fw: deny"));
        List<ClassGroup> groups = List.of(
                new ClassGroup(0, List.of(0), "input -> rw :: SynthRewriter(- - - - -) -> [0]output;", "napt",
                        false),
                new ClassGroup(1, List.of(1), "input -> IPClassifier(udp) -> [0]output;", "lb", true));
        List<OffloadRule> rules = new ArrayList<>();
        if (profile.capacity() > 0 && !profile.matchable().isEmpty()) {
            rules.add(OffloadRule.of(30, RuleMatch.builder().ethType(0x0800).ipProto(6)
                    .l4Dst(RangeMatch.exact(80, 16)).build(), RuleAction.toServer(0), 0, 0));
            rules.add(OffloadRule.of(20, RuleMatch.builder().ethType(0x0800).ipProto(17).build(),
                    RuleAction.toServer(1), 1, 0));
            rules.add(OffloadRule.of(10, RuleMatch.builder().ethType(0x0800)
                    .ipDst(IpPrefix.of(false, BigInteger.valueOf(0x0a000000L), 8)).build(), RuleAction.drop(), 2, 0));
            rules.add(OffloadRule.of(10, RuleMatch.builder().ethType(0x86dd).build(), RuleAction.drop(), 2, 0));
        }
        return new CompiledChain(name, profile, classes, groups, rules, List.of("fw.out0"),
                new SynthStats(3, 3, rules.size(), 0, Map.of()));
    }

    /**
     * A stateless chain: an OpenFlow switch handles it completely (UDP rewritten and forwarded to egress 0,
     * the rest dropped), so it has no groups; without offload it is one software-classifying group.
     */
    public static CompiledChain statelessCompiled(String name, TargetProfile profile) {
        List<TrafficClass> classes = List.of(
                new TrafficClass(0, List.of("udp"), 0, List.of(HeaderWrite.of(MatchField.IP_DST, "10.9.9.9")), true,
                        "", "nat: dst 10.9.9.9"),
                new TrafficClass(1, List.of("-"), -1, List.of(), false, "", "deny"));
        if (!profile.canEgress()) {
            return new CompiledChain(name, profile, classes, List.of(new ClassGroup(0, List.of(0, 1),
                    "input -> IPClassifier(udp, -) => [0]output, Discard;", "", true)), List.of(),
                    List.of("fw.out0"), new SynthStats(2, 2, 0, 2, Map.of()));
        }
        return new CompiledChain(name, profile, classes, List.of(), List.of(
                OffloadRule.of(2, RuleMatch.builder().ethType(0x0800).ipProto(17).build(), RuleAction.toEgress(0,
                        List.of(HeaderWrite.of(MatchField.IP_DST, "10.9.9.9")), true), 0, 0),
                OffloadRule.of(1, RuleMatch.builder().build(), RuleAction.drop(), 1, 0)),
                List.of("fw.out0"), new SynthStats(2, 2, 2, 0, Map.of()));
    }

    /** Compiles like {@link #compiled} ({@link #statelessCompiled} for chains named "stateless*"), rejecting NF configs that contain "Bogus" as the synthesizer would. */
    public static Synthesis synthesis() {
        return (spec, profile) -> {
            if (spec.nfs().stream().anyMatch(nf -> nf.click().contains("Bogus"))) {
                throw new SynthesisException(spec.nfs().get(0).name(), "Bogus", 1, 30, "unknown element class "
                        + "'Bogus'");
            }
            return spec.name().startsWith("stateless") ? statelessCompiled(spec.name(), profile)
                    : compiled(spec.name(), profile);
        };
    }
}
