/**
 * Stand-ins, inside a real Karaf 4.2.9 / Felix OSGi framework, for the ONOS 2.7 core services whose bundles Maven
 * Central does not serve. What the Karaf test (tests/karaf) runs, real and stood in for:
 * <ul>
 *   <li>Real (ONOS 2.7.0 bundles from Maven Central): onos-api, onlab-misc, onlab-osgi, onlab-rest,
 *       onos-core-common (CodecManager: the real JSON codecs), onos-core-serializers, onos-cli (the real
 *       {@code onos:*} commands), onos-rest (the real {@code /onos/v1} REST API), ONOS's third-party bundles at
 *       ONOS 2.7's versions, Karaf's scr and war (Jetty) features, Karaf's JAAS realm.</li>
 *   <li>Stood in for by this bundle (onos-core-net, -dist, -primitives, -persistence, drivers-default, gui):
 *       the application subsystem (over onos-core-common's real ApplicationArchive, so .oar files go in
 *       through ONOS's real REST /onos/v1/applications and their features are installed with Karaf's
 *       FeaturesService, as ONOS's ApplicationManager does); the audit service; the event dispatcher; one cluster
 *       node ({@link org.metron.standin.ClusterStandin}) that is master of
 *       every device and leader of every topic; CoreService; ComponentConfigService; a StorageService whose
 *       consistent maps keep every key and value Kryo-encoded through the caller's serializer (single instance,
 *       no Atomix); the device, link, topology/path, network-config, driver, flow-rule, host and pipeconf
 *       subsystems, on onos-api's own model, provider-registry, listener and driver classes; the
 *       {@code default} driver; the legacy GUI's UiExtensionService (a recorder, enabled by configuration).</li>
 *   <li>Stood in for, in place of ONOS's OpenFlow device provider and LLDP link discovery: switches and links
 *       declared in netcfg, reported as if they had connected and been discovered
 *       ({@link org.metron.standin.net.NetcfgSwitchProvider}); their flow rules are recorded.</li>
 *   <li>Stood in for, in place of ONOS's OpenFlow subsystem (OpenFlowDeviceProvider, OpenFlowRuleProvider, its
 *       FlowStatsCollector) and the LLDP link discovery its OpenFlow app brings (LldpLinkProvider, with
 *       PacketManager's intercept flow rule of the core app): real OpenFlow 1.3 switches that connect to this node
 *       and the links between them, found by ONOS LLDP probes ({@code org.metron.standin.openflow}, on the project's
 *       own OpenFlow code, org.metron.openflow, embedded in this bundle). Not there: BDDP, host discovery.</li>
 *   <li>Cluster mode (Karaf's etc/metron-cluster.json names this node, the nodes and the storage members,
 *       {@link org.metron.standin.cluster.ClusterConfig}): each node a real Atomix 3.1.9 member of a cluster whose
 *       Raft partitions separate storage members hold (tests/karaf/atomix-storage, as ONOS 2.7 runs on atomix-agents;
 *       {@link org.metron.standin.cluster.AtomixNode}) backs the cluster, leadership, mastership and consistent
 *       maps, and shares applications, network configuration and flow tables (tests/karaf/README.md).</li>
 *   <li>Not there at all: P4Runtime/gRPC protocol stacks, ONOS's own apps (none is on Maven Central).</li>
 * </ul>
 */
package org.metron.standin;
