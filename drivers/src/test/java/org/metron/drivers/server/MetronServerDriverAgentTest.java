package org.metron.drivers.server;

import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;
import org.metron.agent.v1.DeployPipelineRequest;
import org.metron.agent.v1.Egress;
import org.metron.agent.v1.GroupSpec;
import org.metron.agent.v1.GroupStats;
import org.metron.agent.v1.HealthReply;
import org.metron.agent.v1.NicRule;
import org.metron.agent.v1.PipelineState;
import org.metron.agent.v1.PipelineStatus;
import org.metron.agent.v1.ServerResources;
import org.metron.agent.v1.Stats;
import org.metron.agent.v1.Tag;
import org.metron.agent.v1.TagType;
import org.metron.drivers.agent.AgentClient;
import org.metron.drivers.agent.AgentEndpoint;
import org.metron.drivers.agent.AgentException;
import org.metron.drivers.testing.AgentProcess;
import org.metron.drivers.testing.Veth;
import org.onlab.packet.MacAddress;
import org.onosproject.net.Device;
import org.onosproject.net.DeviceId;
import org.onosproject.net.PortNumber;
import org.onosproject.net.behaviour.DeviceSystemStatisticsQuery;
import org.onosproject.net.device.DeviceDescription;
import org.onosproject.net.device.DeviceDescriptionDiscovery;
import org.onosproject.net.device.PortDescription;
import org.onosproject.net.device.PortStatistics;
import org.onosproject.net.device.PortStatisticsDiscovery;
import org.onosproject.net.flow.DefaultFlowRule;
import org.onosproject.net.flow.DefaultTrafficSelector;
import org.onosproject.net.flow.DefaultTrafficTreatment;
import org.onosproject.net.flow.FlowEntry;
import org.onosproject.net.flow.FlowRule;
import org.onosproject.net.flow.FlowRuleProgrammable;
import org.onosproject.net.flow.instructions.Instructions;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

/**
 * The metron-server driver against a real metron-agent (DPDK null vdev + a veth pair on kernel fanout
 * dispatch): discover resources, deploy a pipeline and see tagged packets reach its group, install NIC rules
 * with 64-bit ids, read port and CPU statistics, and get the agent's errors back intact.
 */
public class MetronServerDriverAgentTest {

    private static AgentProcess agent;
    private static DefaultAgentClientService agents;
    private static DeviceId device;
    private static MetronServerHandler handler;

    @BeforeClass
    public static void startAgent() throws Exception {
        agent = AgentProcess.start(new AgentProcess.Options().fanout());
        agents = new DefaultAgentClientService();
        agents.activate();
        AgentEndpoint endpoint = AgentEndpoint.builder().host("127.0.0.1").port(agent.port())
                .deadline(AgentProcess.CALL_DEADLINE).build();
        device = MetronDeviceIds.deviceId(endpoint);
        agents.setEndpoint(device, endpoint);
        handler = new MetronServerHandler(device, agents);
    }

    @AfterClass
    public static void stopAgent() throws Exception {
        if (agents != null) {
            agents.deactivate();
        }
        if (agent != null) {
            agent.close();
        }
    }

    private static AgentClient client() {
        return agents.client(device);
    }

    private static <T> T get(java.util.concurrent.CompletableFuture<T> f) throws Exception {
        return f.get(2 * AgentProcess.CALL_DEADLINE.toSeconds(), TimeUnit.SECONDS);
    }

    private static AgentException failure(java.util.concurrent.CompletableFuture<?> f) {
        CompletionException e = assertThrows(CompletionException.class, f::join);
        assertTrue("expected AgentException, got " + e.getCause(), e.getCause() instanceof AgentException);
        return (AgentException) e.getCause();
    }

    private static PortNumber fanoutPort() {
        return ServerDescriptions.ports(client().getResources().join()).stream()
                .map(PortDescription::portNumber).filter(p -> agent.fanoutNic().equals(p.name()))
                .findFirst().orElseThrow();
    }

    @Test
    public void discoversTheServerAndItsNicsAsPorts() throws Exception {
        DeviceDescriptionDiscovery discovery = handler.behaviour(DeviceDescriptionDiscovery.class);
        DeviceDescription d = discovery.discoverDeviceDetails();
        HealthReply health = get(client().health());
        assertTrue(health.getServing());
        assertEquals(Device.Type.SERVER, d.type());
        assertEquals(device.uri(), d.deviceUri());
        assertEquals(health.getAgentVersion(), d.swVersion());
        ServerResources r = get(client().getResources());
        assertEquals(Integer.toString(r.getCoresCount()), d.annotations().value(ServerDescriptions.CORES));
        assertTrue(r.getCoresCount() >= 1);

        List<PortDescription> ports = discovery.discoverPortDetails();
        Map<String, PortDescription> byName = ports.stream()
                .collect(Collectors.toMap(p -> p.portNumber().name(), p -> p));
        assertEquals(Map.of("net_null0", true, agent.fanoutNic(), true).keySet(), byName.keySet());
        assertEquals("DISPATCH_FANOUT_CBPF",
                     byName.get(agent.fanoutNic()).annotations().value(ServerDescriptions.ACTIVE_DISPATCH));
        assertTrue(Integer.parseInt(byName.get(agent.fanoutNic()).annotations()
                                            .value(ServerDescriptions.MAX_NIC_RULES)) > 0);
        assertEquals(List.of(1L, 2L), ports.stream().map(p -> p.portNumber().toLong()).collect(Collectors.toList()));
    }

    @Test
    public void deploysAPipelineWhoseGroupCountsTaggedPackets() throws Exception {
        ServicePipelineProgrammable pipelines = handler.behaviour(ServicePipelineProgrammable.class);
        int core = get(client().getResources()).getCores(0).getId();
        String nic = agent.fanoutNic();
        DeployPipelineRequest req = DeployPipelineRequest.newBuilder()
                .setPipelineId("chain-count").setIngressNic(nic)
                .addEgress(Egress.newBuilder().setNic(nic))
                .addGroups(GroupSpec.newBuilder().setGroupId("g7").setClickConfig("input -> [0]output;")
                                   .setTag(Tag.newBuilder().setType(TagType.TAG_MAC).setValue(7))
                                   .setCore(core).addClassIds(3))
                .build();
        PipelineStatus st = get(pipelines.deploy(req));
        try {
            assertEquals(PipelineState.PIPELINE_RUNNING, st.getState());
            assertEquals(1, st.getGroupsCount());
            assertEquals("g7", st.getGroups(0).getGroupId());
            assertTrue(get(pipelines.pipelines()).stream().anyMatch(p -> p.getPipelineId().equals("chain-count")));
            assertTrue(get(client().getResources()).getTagsInUseList().contains(7));

            // a second deploy of the same id is refused and leaves the first running
            AgentException dup = failure(pipelines.deploy(req));
            assertEquals(AgentException.Code.ALREADY_EXISTS, dup.code());
            assertTrue(dup.getMessage(), dup.getMessage().contains(client().target()));

            long before = portRx(nic);
            int sent = 40;
            Veth.sendInto(agent.peerNic(), "02:4d:00:07:00:03", sent);
            GroupStats g = awaitGroupPackets("chain-count", "g7", sent);
            assertEquals(sent, g.getPackets());
            assertEquals(sent, g.getClassesList().stream().filter(c -> c.getClassId() == 3)
                    .findFirst().orElseThrow().getPackets());
            assertTrue("port counters include the frames", portRx(nic) - before >= sent);

            Map<Integer, Double> loads = handler.behaviour(CpuLoadDiscovery.class).coreLoads();
            assertTrue(loads.containsKey(core));
            loads.values().forEach(l -> assertTrue(l >= 0.0 && l <= 1.0));
            assertTrue(handler.behaviour(DeviceSystemStatisticsQuery.class).getDeviceSystemStats().isPresent());
        } finally {
            get(pipelines.remove("chain-count"));
        }
        assertFalse(get(pipelines.pipelines()).stream().anyMatch(p -> p.getPipelineId().equals("chain-count")));
        AgentException gone = failure(pipelines.remove("chain-count"));
        assertEquals(AgentException.Code.NOT_FOUND, gone.code());
        assertTrue(gone.getMessage(), gone.getMessage().contains("chain-count"));
    }

    private static long portRx(String nic) {
        PortStatisticsDiscovery stats = handler.behaviour(PortStatisticsDiscovery.class);
        return stats.discoverPortStatistics().stream().filter(p -> p.portNumber().name().equals(nic))
                .mapToLong(PortStatistics::packetsReceived).findFirst().orElseThrow();
    }

    private static GroupStats awaitGroupPackets(String pipeline, String group, long n) throws Exception {
        long deadline = System.currentTimeMillis() + 60_000;
        GroupStats last = null;
        while (System.currentTimeMillis() < deadline) {
            Stats s = get(client().getStats(pipeline));
            last = s.getGroupsList().stream().filter(g -> g.getGroupId().equals(group)).findFirst().orElseThrow();
            if (last.getPackets() >= n) {
                return last;
            }
            Thread.sleep(50);
        }
        throw new AssertionError("group " + group + " saw " + (last == null ? 0 : last.getPackets()) + " of " + n
                                         + " packets; agent output:\n" + agent.output());
    }

    @Test
    public void badClickConfigIsRefusedWithTheAgentsMessage() {
        DeployPipelineRequest bad = DeployPipelineRequest.newBuilder()
                .setPipelineId("chain-bad").setIngressNic(agent.fanoutNic())
                .addEgress(Egress.newBuilder().setNic(agent.fanoutNic()))
                .addGroups(GroupSpec.newBuilder().setGroupId("g1").setClickConfig("input -> NoSuchElement -> [0]output;")
                                   .setTag(Tag.newBuilder().setType(TagType.TAG_MAC).setValue(11))
                                   .setCore(client().getResources().join().getCores(0).getId()))
                .build();
        AgentException e = failure(handler.behaviour(ServicePipelineProgrammable.class).deploy(bad));
        assertEquals(AgentException.Code.INVALID_ARGUMENT, e.code());
        assertTrue(e.getMessage(), e.getMessage().startsWith("agent " + client().target() + ": DeployPipeline"));
        assertTrue(e.getMessage(), e.getMessage().contains("click_config"));
        assertFalse(client().listPipelines().join().getPipelinesList().stream()
                            .anyMatch(p -> p.getPipelineId().equals("chain-bad")));
    }

    @Test
    public void installsListsAndRemovesNicRulesWith64BitIds() throws Exception {
        FlowRuleProgrammable nicRules = handler.behaviour(FlowRuleProgrammable.class);
        long id = 0xf00d_0000_0000_0042L;   // high bit set: would not survive a 32-bit or signed truncation
        FlowRule rule = DefaultFlowRule.builder().forDevice(device).withCookie(id).withPriority(1000)
                .withSelector(DefaultTrafficSelector.builder().matchInPort(fanoutPort())
                                      .matchEthDstMasked(MacAddress.valueOf("02:4d:00:09:00:00"),
                                                         MacAddress.valueOf("ff:ff:ff:ff:00:00")).build())
                // the queue names a worker core (agent.proto NicAction.queue), here the agent's only worker
                .withTreatment(DefaultTrafficTreatment.builder()
                                       .add(Instructions.setQueue(client().getResources().join().getCores(0).getId(),
                                                                  null)).build())
                .makePermanent().build();
        assertEquals(List.of(rule), List.copyOf(nicRules.applyFlowRules(List.of(rule))));
        try {
            List<NicRule> listed = get(client().listNicRules(agent.fanoutNic())).getRulesList();
            assertEquals(1, listed.size());
            assertEquals(id, listed.get(0).getId());
            assertEquals(65535 - 1000, listed.get(0).getPriority());

            Collection<FlowEntry> entries = nicRules.getFlowEntries();
            assertEquals(1, entries.size());
            FlowEntry e = entries.iterator().next();
            assertEquals(rule.id(), e.id());
            assertEquals(rule.selector(), e.selector());
            assertEquals(rule.treatment(), e.treatment());
            assertEquals(rule.priority(), e.priority());

            // a batch the agent refuses (a core it does not run) installs nothing, keeps the installed rule
            FlowRule badQueue = DefaultFlowRule.builder().forDevice(device).withCookie(id + 1).withPriority(10)
                    .withSelector(DefaultTrafficSelector.builder().matchInPort(fanoutPort()).build())
                    .withTreatment(DefaultTrafficTreatment.builder().add(Instructions.setQueue(999, null)).build())
                    .makePermanent().build();
            FlowRule ok = DefaultFlowRule.builder().forDevice(device).withCookie(id + 2).withPriority(10)
                    .withSelector(DefaultTrafficSelector.builder().matchInPort(fanoutPort()).build())
                    .withTreatment(DefaultTrafficTreatment.builder().drop().build()).makePermanent().build();
            assertTrue(nicRules.applyFlowRules(List.of(ok, badQueue)).isEmpty());
            AgentException refused = failure(client().installNicRules(org.metron.agent.v1.NicRuleBatch.newBuilder()
                    .addRules(new NicRuleTranslator(NicPorts.of(client().getResources().join())).toNicRule(badQueue))
                    .build()));
            assertEquals(AgentException.Code.INVALID_ARGUMENT, refused.code());
            assertTrue(refused.getMessage(), refused.getMessage().contains("queue"));
            assertEquals(List.of(id), get(client().listNicRules("")).getRulesList().stream()
                    .map(NicRule::getId).collect(Collectors.toList()));
        } finally {
            assertEquals(1, nicRules.removeFlowRules(List.of(rule)).size());
        }
        assertEquals(0, get(client().listNicRules("")).getRulesCount());
    }

    @Test
    public void loadStreamDeliversPeriodicReports() throws Exception {
        java.util.concurrent.CountDownLatch three = new java.util.concurrent.CountDownLatch(3);
        java.util.concurrent.atomic.AtomicReference<Throwable> error = new java.util.concurrent.atomic.AtomicReference<>();
        try (AutoCloseable sub = client().streamLoad(50, s -> three.countDown(), error::set)) {
            assertTrue("3 load reports", three.await(60, TimeUnit.SECONDS));
        }
        assertEquals(null, error.get());
    }
}
