package org.metron.drivers.server;

import org.metron.agent.v1.NicRule;
import org.metron.agent.v1.NicRuleBatch;
import org.metron.drivers.agent.AgentEndpoint;
import org.metron.drivers.testing.AgentProcess;
import org.onlab.packet.MacAddress;
import org.onosproject.net.DeviceId;
import org.onosproject.net.PortNumber;
import org.onosproject.net.device.PortDescription;
import org.onosproject.net.flow.DefaultFlowRule;
import org.onosproject.net.flow.DefaultTrafficSelector;
import org.onosproject.net.flow.DefaultTrafficTreatment;
import org.onosproject.net.flow.FlowRule;
import org.onosproject.net.flow.FlowRuleProgrammable;
import org.onosproject.net.flow.instructions.Instructions;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;

/**
 * NIC rule installation through the metron-server driver (ONOS FlowRules → FlowRuleProgrammable: resources
 * lookup, translation, one InstallNicRules batch) against the baseline of the same rules, already translated,
 * sent as one InstallNicRules batch on the raw client. Same real agent, interleaved rounds, medians.
 * Usage: NicRuleInstallBench <results-dir> <machine>
 */
public final class NicRuleInstallBench {

    /** Fits the fanout NIC's 512-entry table. */
    private static final int RULES = 500;
    /** make test's bench smoke (-Dmetron.bench.smoke=true): one round, to prove the bench still runs. */
    private static final boolean SMOKE = Boolean.getBoolean("metron.bench.smoke");
    private static final int ROUNDS = SMOKE ? 1 : 7;

    private NicRuleInstallBench() {
    }

    public static void main(String[] args) throws Exception {
        Path out = Paths.get(args[0]);
        String machine = args[1];
        DefaultAgentClientService agents = new DefaultAgentClientService();
        try (AgentProcess agent = AgentProcess.start(new AgentProcess.Options().fanout())) {
            agents.activate();
            AgentEndpoint ep = AgentEndpoint.builder().host("127.0.0.1").port(agent.port())
                    .deadline(AgentProcess.CALL_DEADLINE).build();
            DeviceId device = MetronDeviceIds.deviceId(ep);
            agents.setEndpoint(device, ep);
            FlowRuleProgrammable driver = new MetronServerHandler(device, agents).behaviour(FlowRuleProgrammable.class);
            var client = agents.client(device);
            var resources = client.getResources().join();
            PortNumber port = ServerDescriptions.ports(resources).stream().map(PortDescription::portNumber)
                    .filter(p -> agent.fanoutNic().equals(p.name())).findFirst().orElseThrow();
            // A NIC rule's queue is a worker core of the agent (the agent refuses any other): the first one it reports.
            long queue = resources.getCores(0).getId();
            List<FlowRule> rules = new ArrayList<>();
            for (int i = 1; i <= RULES; i++) {          // group tags are 1..65535
                rules.add(DefaultFlowRule.builder().forDevice(device).withCookie(0x8000_0000_0000_0000L | i)
                                  .withPriority(1000 + i % 100)
                                  .withSelector(DefaultTrafficSelector.builder().matchInPort(port)
                                                        .matchEthDstMasked(MacAddress.valueOf(String.format(
                                                                "02:4d:%02x:%02x:00:00", (i >> 8) & 0xff, i & 0xff)),
                                                                           MacAddress.valueOf("ff:ff:ff:ff:00:00"))
                                                        .build())
                                  .withTreatment(DefaultTrafficTreatment.builder()
                                                         .add(Instructions.setQueue(queue, null)).build())
                                  .makePermanent().build());
            }
            NicRuleTranslator t = new NicRuleTranslator(NicPorts.of(resources));
            // fail loudly (with the agent's message) if the agent refuses the batch at all
            client.installNicRules(NicRuleBatch.newBuilder()
                    .addAllRules(rules.stream().map(t::toNicRule).collect(Collectors.toList())).build()).join();
            client.removeNicRules(rules.stream().map(r -> r.id().value()).collect(Collectors.toList())).join();
            NicRuleBatch batch = NicRuleBatch.newBuilder()
                    .addAllRules(rules.stream().map(t::toNicRule).collect(Collectors.toList())).build();
            List<Long> ids = batch.getRulesList().stream().map(NicRule::getId).collect(Collectors.toList());

            long[] viaDriver = new long[ROUNDS];
            long[] raw = new long[ROUNDS];
            for (int r = -1; r < ROUNDS; r++) {           // round -1 warms both paths up
                long t0 = System.nanoTime();
                if (driver.applyFlowRules(rules).size() != RULES) {
                    throw new IllegalStateException("driver installed fewer than " + RULES + " rules");
                }
                long t1 = System.nanoTime();
                client.removeNicRules(ids).join();
                long t2 = System.nanoTime();
                client.installNicRules(batch).join();
                long t3 = System.nanoTime();
                client.removeNicRules(ids).join();
                if (r >= 0) {
                    viaDriver[r] = t1 - t0;
                    raw[r] = t3 - t2;
                }
            }
            double value = median(viaDriver) / 1e6;
            double baseline = median(raw) / 1e6;
            String json = String.format(java.util.Locale.ROOT,
                    "{\"name\": \"drivers_nic_rule_install_%d\", \"value\": %.3f, \"unit\": \"ms\", "
                            + "\"baseline\": \"same %d rules pre-translated, one raw InstallNicRules RPC\", "
                            + "\"baseline_value\": %.3f, \"ratio\": %.3f, \"machine\": \"%s\"}%n",
                    RULES, value, RULES, baseline, value / baseline, machine.replace("\"", "'"));
            Files.createDirectories(out);
            Files.writeString(out.resolve("drivers_nic_rule_install.json"), json);
            System.out.print(json);
        } finally {
            agents.deactivate();
        }
    }

    private static double median(long[] v) {
        long[] s = v.clone();
        Arrays.sort(s);
        return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2.0;
    }
}
