package org.metron.app.onos;

import org.junit.Test;
import org.metron.app.spi.DeviceRole;
import org.metron.app.spi.MetronMap;
import org.metron.app.spi.MetronServer;
import org.metron.app.spi.NetworkDevice;
import org.metron.app.spi.SwitchProgrammer;
import org.metron.app.store.ChainStore;
import org.metron.app.store.MetronSerializers;
import org.metron.app.testing.Fixtures;
import org.metron.app.testing.TestAgent;
import org.metron.drivers.agent.AgentClient;
import org.metron.drivers.tagging.TaggerPipeconfId;
import org.metron.drivers.server.AgentClientService;
import org.metron.drivers.server.DefaultAgentClientService;
import org.metron.drivers.server.MetronDriversLoader;
import org.onosproject.net.driver.DefaultDriverData;
import org.onosproject.net.driver.DefaultDriverHandler;
import org.onosproject.net.driver.Driver;
import org.onosproject.net.driver.DriverHandler;
import org.onosproject.net.driver.DriverServiceAdapter;
import org.onosproject.net.driver.XmlDriverLoader;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import org.onlab.packet.ChassisId;
import org.onlab.packet.IpAddress;
import org.onlab.packet.MacAddress;
import org.onlab.packet.VlanId;
import org.onosproject.core.ApplicationId;
import org.onosproject.core.CoreServiceAdapter;
import org.onosproject.net.Annotations;
import org.onosproject.net.ConnectPoint;
import org.onosproject.net.DefaultAnnotations;
import org.onosproject.net.DefaultDevice;
import org.onosproject.net.DefaultHost;
import org.onosproject.net.DefaultLink;
import org.onosproject.net.DefaultPath;
import org.onosproject.net.DefaultPort;
import org.onosproject.net.Device;
import org.onosproject.net.DeviceId;
import org.onosproject.net.ElementId;
import org.onosproject.net.Host;
import org.onosproject.net.HostId;
import org.onosproject.net.HostLocation;
import org.onosproject.net.Link;
import org.onosproject.net.Path;
import org.onosproject.net.Port;
import org.onosproject.net.PortNumber;
import org.onosproject.net.device.DeviceServiceAdapter;
import org.onosproject.net.flow.DefaultFlowRule;
import org.onosproject.net.flow.DefaultTrafficSelector;
import org.onosproject.net.flow.DefaultTrafficTreatment;
import org.onosproject.net.flow.FlowRule;
import org.onosproject.net.flow.FlowRuleOperation;
import org.onosproject.net.flow.FlowRuleOperations;
import org.onosproject.net.flow.FlowRuleServiceAdapter;
import org.onosproject.net.host.HostServiceAdapter;
import org.onosproject.net.link.LinkServiceAdapter;
import org.onosproject.net.pi.PiPipeconfServiceAdapter;
import org.onosproject.net.pi.model.PiPipeconfId;
import org.onosproject.net.provider.ProviderId;
import org.onosproject.net.topology.PathServiceAdapter;
import org.onosproject.core.DefaultApplicationId;
import org.onlab.graph.ScalarWeight;
import org.onosproject.store.service.TestStorageService;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

/** The OSGi adapters against ONOS's own service adapters. */
public class OnosAdaptersTest {
    private static final ProviderId PID = new ProviderId("test", "metron");
    private static final ApplicationId APP = new DefaultApplicationId(3, OnosSwitchProgrammer.APP_NAME);
    private static final DeviceId SERVER = DeviceId.deviceId("metron:10.0.0.1:50051");
    private static final DeviceId P4 = DeviceId.deviceId("device:leaf1");

    private static Device device(DeviceId id, Device.Type type, Annotations a) {
        return new DefaultDevice(PID, id, type, "m", "hw", "sw", "1", new ChassisId(), a);
    }

    private static Link link(String a, long pa, String b, long pb) {
        return DefaultLink.builder().providerId(PID)
                .src(new ConnectPoint(DeviceId.deviceId(a), PortNumber.portNumber(pa)))
                .dst(new ConnectPoint(DeviceId.deviceId(b), PortNumber.portNumber(pb)))
                .type(Link.Type.DIRECT).build();
    }

    /** Three switches, a P4 switch, a server whose NIC eth0 (port 1) is cabled to s2 port 10. */
    private static final class Devices extends DeviceServiceAdapter {
        final List<Device> devices = List.of(
                device(Fixtures.D1, Device.Type.SWITCH, DefaultAnnotations.EMPTY),
                device(Fixtures.D2, Device.Type.SWITCH, DefaultAnnotations.builder()
                        .set(DeviceRoles.CAPACITY, "123").build()),
                device(P4, Device.Type.SWITCH, DefaultAnnotations.EMPTY),
                device(SERVER, Device.Type.SERVER, DefaultAnnotations.EMPTY));

        @Override
        public Iterable<Device> getAvailableDevices() {
            return devices;
        }

        @Override
        public Device getDevice(DeviceId id) {
            return devices.stream().filter(d -> d.id().equals(id)).findFirst().orElse(null);
        }

        @Override
        public boolean isAvailable(DeviceId id) {
            return getDevice(id) != null;
        }

        @Override
        public List<Port> getPorts(DeviceId id) {
            if (!id.equals(SERVER)) {
                return List.of();
            }
            return List.of(new DefaultPort(getDevice(id), PortNumber.portNumber(1, "eth0"), true),
                    new DefaultPort(getDevice(id), PortNumber.portNumber(2, "eth1"), true));
        }
    }

    private OnosNetworkView view() {
        OnosNetworkView v = new OnosNetworkView();
        v.deviceService = new Devices();
        v.pipeconfService = new PiPipeconfServiceAdapter() {
            @Override
            public Optional<PiPipeconfId> ofDevice(DeviceId d) {
                return d.equals(P4) ? Optional.of(TaggerPipeconfId.ID) : Optional.empty();
            }
        };
        v.pathService = new PathServiceAdapter() {
            @Override
            public Set<Path> getPaths(ElementId src, ElementId dst) {
                // two paths: the cheaper one must win
                return Set.of(new DefaultPath(PID, List.of(link(Fixtures.S1, 5, "of:0000000000000009", 1),
                                link("of:0000000000000009", 2, Fixtures.S2, 5)), ScalarWeight.toWeight(2)),
                        new DefaultPath(PID, List.of(link(Fixtures.S1, 2, Fixtures.S2, 1)), ScalarWeight.toWeight(1)));
            }
        };
        v.hostService = new HostServiceAdapter() {
            @Override
            public Set<Host> getConnectedHosts(ConnectPoint at) {
                return at.equals(SINK_POINT) ? Set.of(new DefaultHost(PID, HostId.hostId(SINK_MAC), SINK_MAC,
                        VlanId.NONE, new HostLocation(at, 0), Set.of(IpAddress.valueOf("10.0.0.2")))) : Set.of();
            }
        };
        v.activate();
        return v;
    }

    private static final ConnectPoint SINK_POINT = ConnectPoint.deviceConnectPoint(Fixtures.S2 + "/10");
    private static final MacAddress SINK_MAC = MacAddress.valueOf("02:00:00:00:00:02");

    @Test
    public void networkViewKnowsTheHostsHostServiceKnows() {
        OnosNetworkView v = view();
        assertEquals(Set.of(SINK_MAC), v.hostMacs(SINK_POINT));
        assertEquals(Set.of(), v.hostMacs(ConnectPoint.deviceConnectPoint(Fixtures.S1 + "/1")));
    }

    @Test
    public void networkViewClassifiesDevicesAndPicksTheCheapestPath() {
        OnosNetworkView v = view();
        assertEquals(new NetworkDevice(Fixtures.D1, DeviceRole.OPENFLOW_SWITCH, 65_000), v.device(Fixtures.D1).get());
        assertEquals(123, v.device(Fixtures.D2).get().ruleCapacity());
        assertEquals(DeviceRole.P4_TAGGER, v.device(P4).get().role());
        assertEquals(DeviceRole.SERVER, v.device(SERVER).get().role());
        assertFalse(v.device(DeviceId.deviceId("of:00000000000000ff")).isPresent());
        assertEquals(4, v.devices().size());
        List<Link> p = v.path(ConnectPoint.deviceConnectPoint(Fixtures.S1 + "/1"),
                ConnectPoint.deviceConnectPoint(Fixtures.S2 + "/10")).get();
        assertEquals(1, p.size());
        assertEquals(PortNumber.portNumber(2), p.get(0).src().port());
        assertTrue(v.path(ConnectPoint.deviceConnectPoint(Fixtures.S1 + "/1"),
                ConnectPoint.deviceConnectPoint(Fixtures.S1 + "/3")).get().isEmpty());
    }

    /** FlowRuleService that answers batches like ONOS does, failing those that touch a chosen device. */
    private static final class Flows extends FlowRuleServiceAdapter {
        final List<FlowRuleOperations> applied = new ArrayList<>();
        DeviceId failing;

        @Override
        public void apply(FlowRuleOperations ops) {
            applied.add(ops);
            boolean fail = ops.stages().stream().flatMap(Set::stream)
                    .anyMatch(o -> o.rule().deviceId().equals(failing) && o.type() == FlowRuleOperation.Type.ADD);
            if (fail) {
                ops.callback().onError(ops);
            } else {
                ops.callback().onSuccess(ops);
            }
        }
    }

    private static FlowRule rule(DeviceId d, int prio) {
        return DefaultFlowRule.builder().forDevice(d).withPriority(prio).fromApp(APP).makePermanent()
                .withSelector(DefaultTrafficSelector.builder().matchInPort(PortNumber.portNumber(1)).build())
                .withTreatment(DefaultTrafficTreatment.builder().setOutput(PortNumber.portNumber(2)).build())
                .build();
    }

    private static CoreServiceAdapter core() {
        return new CoreServiceAdapter() {
            @Override
            public ApplicationId registerApplication(String name) {
                return APP;
            }
        };
    }

    private static OnosSwitchProgrammer programmer(Flows flows) {
        OnosSwitchProgrammer sp = new OnosSwitchProgrammer();
        sp.flowRuleService = flows;
        sp.coreService = core();
        sp.activate();
        return sp;
    }

    @Test
    public void switchProgrammerCompensatesAFailedBatch() throws Exception {
        Flows flows = new Flows();
        OnosSwitchProgrammer sp = programmer(flows);
        sp.install(Fixtures.D1, List.of(rule(Fixtures.D1, 10), rule(Fixtures.D1, 11))).get(1, TimeUnit.SECONDS);
        assertEquals(1, flows.applied.size());

        flows.failing = Fixtures.D2;
        CompletableFuture<Void> f = sp.install(Fixtures.D2, List.of(rule(Fixtures.D2, 10)));
        ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(1, TimeUnit.SECONDS));
        assertTrue(e.getMessage(), e.getMessage().contains(Fixtures.S2) && e.getMessage().contains("compensated"));
        FlowRuleOperations undo = flows.applied.get(2);
        assertEquals(FlowRuleOperation.Type.REMOVE, undo.stages().get(0).iterator().next().type());

        sp.remove(Fixtures.D1, List.of(rule(Fixtures.D1, 10))).get(1, TimeUnit.SECONDS);
        assertEquals(FlowRuleOperation.Type.REMOVE, flows.applied.get(3).stages().get(0).iterator().next().type());
    }

    @Test
    public void aChainUpdatesMoveIsOneFlowRuleBatchOfAddsAndRemovals() throws Exception {
        Flows flows = new Flows();
        OnosSwitchProgrammer sp = programmer(flows);
        SwitchProgrammer.Staged staged = sp.stage(Fixtures.D1, List.of(rule(Fixtures.D1, 12), rule(Fixtures.D1, 13)),
                List.of(rule(Fixtures.D1, 10))).get(1, TimeUnit.SECONDS);
        assertEquals("nothing reaches the device before the commit", 0, flows.applied.size());
        staged.commit().get(1, TimeUnit.SECONDS);
        // one batch, one stage: ONOS hands it to the device as one flow rule batch
        assertEquals(1, flows.applied.size());
        assertEquals(1, flows.applied.get(0).stages().size());
        Map<FlowRuleOperation.Type, Long> kinds = flows.applied.get(0).stages().get(0).stream()
                .collect(Collectors.groupingBy(FlowRuleOperation::type, Collectors.counting()));
        assertEquals(Map.of(FlowRuleOperation.Type.ADD, 2L, FlowRuleOperation.Type.REMOVE, 1L), kinds);

        // a device that refuses the batch: the compensation takes the adds away and puts the removed rule back
        flows.failing = Fixtures.D1;
        CompletableFuture<Void> f = sp.stage(Fixtures.D1, List.of(rule(Fixtures.D1, 14)), List.of(rule(Fixtures.D1,
                12))).thenCompose(SwitchProgrammer.Staged::commit);
        assertThrows(ExecutionException.class, () -> f.get(1, TimeUnit.SECONDS));
        Map<FlowRuleOperation.Type, Long> undo = flows.applied.get(2).stages().get(0).stream()
                .collect(Collectors.groupingBy(FlowRuleOperation::type, Collectors.counting()));
        assertEquals(Map.of(FlowRuleOperation.Type.ADD, 1L, FlowRuleOperation.Type.REMOVE, 1L), undo);
    }

    @Test
    public void storeFactoryBuildsConsistentMaps() {
        OnosStoreFactory f = new OnosStoreFactory();
        f.storageService = new TestStorageService();
        f.coreService = core();
        MetronMap<String, String> m = f.map("metron-test", MetronSerializers.NAMESPACE);
        assertTrue(m.putIfAbsent("k", "v"));
        assertEquals("v", m.get("k").get().value());
        ChainStore store = new ChainStore(f, new org.metron.app.testing.TestSwitches());
        assertTrue(store.chains().snapshot().isEmpty());
    }

    @Test
    public void serverRegistryFindsServersAndWhereTheirNicsAreCabled() {
        OnosServerRegistry r = new OnosServerRegistry();
        r.deviceService = new Devices();
        r.netcfgService = new org.onosproject.net.config.NetworkConfigServiceAdapter(); // no netcfg: links only
        r.linkService = new LinkServiceAdapter() {
            @Override
            public Set<Link> getEgressLinks(ConnectPoint cp) {
                return cp.equals(new ConnectPoint(SERVER, PortNumber.portNumber(1)))
                        ? Set.of(link(SERVER.toString(), 1, Fixtures.S2, 10)) : Set.of();
            }
        };
        TestAgent agent = new TestAgent("10.0.0.1:50051", 2, 0);
        AgentClientService agents = new DefaultAgentClientService() {
            @Override
            public AgentClient client(DeviceId device) {
                return agent;
            }
        };
        // ONOS's driver subsystem with the real metron-server driver: the agent comes through its AgentAccess
        Driver driver = metronServerDriver();
        r.driverService = new DriverServiceAdapter() {
            @Override
            public DriverHandler createHandler(DeviceId id, String... credentials) {
                return new DefaultDriverHandler(new DefaultDriverData(driver, id)) {
                    @Override
                    public <T> T get(Class<T> service) {
                        return service.cast(agents);
                    }
                };
            }
        };
        List<MetronServer> servers = new ArrayList<>(r.servers());
        assertEquals(1, servers.size());
        assertEquals(SERVER, servers.get(0).id());
        assertEquals(Map.of("eth0", ConnectPoint.deviceConnectPoint(Fixtures.S2 + "/10")),
                servers.get(0).attachments());
        assertEquals(agent, r.server(SERVER).get().agent());
        assertFalse(r.server(Fixtures.D1).isPresent());
    }

    private static Driver metronServerDriver() {
        try (InputStream xml = MetronDriversLoader.class.getResourceAsStream(MetronDriversLoader.DRIVERS_XML)) {
            return new XmlDriverLoader(OnosAdaptersTest.class.getClassLoader(), null).loadDrivers(xml, null)
                    .getDrivers().iterator().next();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
