package org.metron.standin.openflow;

import org.metron.openflow.OpenFlowController;
import org.metron.openflow.OpenFlowException;
import org.onlab.packet.Ethernet;
import org.onosproject.cluster.ClusterService;
import org.onosproject.core.CoreService;
import org.onosproject.mastership.MastershipService;
import org.onosproject.net.device.DeviceProviderRegistry;
import org.onosproject.net.device.DeviceService;
import org.onosproject.net.flow.DefaultTrafficSelector;
import org.onosproject.net.flow.FlowRuleProviderRegistry;
import org.onosproject.net.flow.FlowRuleService;
import org.onosproject.net.link.LinkProviderRegistry;
import org.onosproject.net.packet.PacketPriority;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Modified;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetSocketAddress;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Stands in for ONOS 2.7.0's OpenFlow subsystem (the openflow controller, OpenFlowDeviceProvider and
 * OpenFlowRuleProvider with its FlowStatsCollector), whose bundles Maven Central does not serve, on the project's
 * own OpenFlow 1.3 southbound (org.metron.openflow, the embedded host's: one translator of flow rules for both).
 * Real switches (OVS: {@code set-controller tcp:<this node>:6653}) connect, become {@code of:} devices and get
 * their rules as flow mods. Configuration (PID {@value #PID}, e.g. {@code etc/org.metron.standin.openflow.cfg}):
 * {@code openflowPort} (ONOS's default 6653; 0 turns the listener off) and {@code flowPollFrequencyMs} (ONOS polls
 * flow statistics every 5 s). A port already taken is logged and leaves this node without OpenFlow, nothing else.
 * As ONOS's OpenFlow app, it brings LLDP link discovery ({@link LldpLinkDiscovery}, with its packet intercept,
 * {@link PacketIntercepts}): links between the switches need no netcfg.
 */
@Component(name = OpenFlowStandin.PID, immediate = true,
        property = {"openflowPort:Integer=6653", "flowPollFrequencyMs:Integer=5000"})
public class OpenFlowStandin {
    static final String PID = "org.metron.standin.openflow";
    private final Logger log = LoggerFactory.getLogger(getClass());
    private OpenFlowController controller;
    private ExecutorService events;
    private ScheduledExecutorService poller;
    private OfDeviceProvider devices;
    private OfRuleProvider rules;
    private ScheduledExecutorService discovery;
    private PacketIntercepts intercepts;
    private LldpLinkDiscovery links;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected DeviceProviderRegistry deviceRegistry;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected FlowRuleProviderRegistry flowRegistry;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected MastershipService mastership;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected LinkProviderRegistry linkRegistry;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected DeviceService deviceService;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected FlowRuleService flowService;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected CoreService coreService;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected ClusterService clusterService;

    @Activate
    protected void activate(Map<String, Object> config) {
        start(config);
    }

    @Modified
    protected void modified(Map<String, Object> config) {
        stop();
        start(config);
    }

    @Deactivate
    protected void deactivate() {
        stop();
    }

    private static int intValue(Map<String, Object> config, String key, int fallback) {
        Object v = config.get(key);
        return v == null ? fallback : Integer.parseInt(v.toString().trim());
    }

    private void start(Map<String, Object> config) {
        int port = intValue(config, "openflowPort", 6653);
        int pollMs = intValue(config, "flowPollFrequencyMs", 5000);
        if (port == 0) {
            log.info("OpenFlow listener off (openflowPort=0)");
            return;
        }
        try {
            controller = OpenFlowController.listen(new InetSocketAddress(port), OpenFlowController.DEFAULT_DEADLINE_MS);
        } catch (OpenFlowException e) {
            log.warn("no OpenFlow on this node: {}", e.getMessage());
            return;
        }
        events = Executors.newSingleThreadExecutor(r -> new Thread(r, "standin-openflow-devices"));
        poller = Executors.newSingleThreadScheduledExecutor(r -> new Thread(r, "standin-openflow-stats"));
        devices = new OfDeviceProvider(controller, events);
        rules = new OfRuleProvider(devices, mastership, poller, pollMs);
        controller.addListener(devices);
        controller.addListener(rules);
        rules.start(flowRegistry.register(rules));
        devices.start(deviceRegistry.register(devices));
        startLinkDiscovery();
        log.info("OpenFlow switches accepted on port {}; flow statistics every {} ms", port, pollMs);
    }

    /**
     * ONOS's OpenFlow app brings the LLDP link provider: its intercept (LldpLinkProvider.requestIntercepts: LLDP to
     * the controller, priority CONTROL, through PacketService, whose rules are the core app's) and its probes.
     */
    private void startLinkDiscovery() {
        discovery = Executors.newSingleThreadScheduledExecutor(r -> new Thread(r, "standin-lldp"));
        intercepts = new PacketIntercepts(deviceService, flowService,
                                          coreService.registerApplication(CoreService.CORE_APP_NAME));
        intercepts.request(DefaultTrafficSelector.builder().matchEthType(Ethernet.TYPE_LLDP).build(),
                           PacketPriority.CONTROL);
        links = new LldpLinkDiscovery(devices, deviceService, mastership, clusterService, discovery);
        controller.addListener(links);
        links.start(linkRegistry.register(links));
    }

    private void stop() {
        if (controller == null) {
            return;
        }
        intercepts.cancelAll();
        links.stop();
        discovery.shutdownNow();
        linkRegistry.unregister(links);
        controller.close();
        poller.shutdownNow();
        events.shutdown();
        try {
            events.awaitTermination(5, TimeUnit.SECONDS); // the disconnects the closed channels just queued
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        flowRegistry.unregister(rules);
        deviceRegistry.unregister(devices);
        controller = null;
    }
}
