package org.metron.embedded.net;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.common.collect.ImmutableList;
import com.google.common.collect.ImmutableMap;
import org.onosproject.net.ConnectPoint;
import org.onosproject.net.DeviceId;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The network as the topology launcher recorded it ({@code network} in its state file, written by
 * topologies/metron_topo/launcher.py, the single place that turns topology files into ONOS ids). Immutable.
 */
public final class NetworkFile {
    /** A server: its device id, agent address (and TLS files, when it speaks TLS) and where each NIC is cabled. */
    public static final class Server {
        public final String name;
        public final DeviceId id;
        public final Optional<String> agent;
        public final Optional<AgentTls> tls;
        public final Map<String, ConnectPoint> attachments;
        public final Map<String, Long> nicPorts;

        Server(String name, DeviceId id, Optional<String> agent, Optional<AgentTls> tls,
               Map<String, ConnectPoint> attachments, Map<String, Long> nicPorts) {
            this.name = name;
            this.id = id;
            this.agent = agent;
            this.tls = tls;
            this.attachments = attachments;
            this.nicPorts = nicPorts;
        }
    }

    /** An end host (traffic source or sink) and the switch port it hangs off. */
    public static final class Host {
        public final String name;
        public final String ip;
        public final String mac;
        public final String netns;
        public final ConnectPoint attachment;

        Host(String name, String ip, String mac, String netns, ConnectPoint attachment) {
            this.name = name;
            this.ip = ip;
            this.mac = mac;
            this.netns = netns;
            this.attachment = attachment;
        }
    }

    public final Path source;
    public final Map<String, DeviceId> switches;
    public final List<Server> servers;
    public final List<Host> hosts;
    public final List<List<ConnectPoint>> links;
    public final List<ConnectPoint> ingress;
    public final List<ConnectPoint> egress;

    private NetworkFile(Path source, JsonNode net) {
        this.source = source;
        ImmutableMap.Builder<String, DeviceId> sw = ImmutableMap.builder();
        net.get("switches").forEach(s -> sw.put(s.get("name").asText(), DeviceId.deviceId(s.get("device_id").asText())));
        switches = sw.build();
        ImmutableList.Builder<Server> srv = ImmutableList.builder();
        for (JsonNode s : net.get("servers")) {
            ImmutableMap.Builder<String, ConnectPoint> att = ImmutableMap.builder();
            ImmutableMap.Builder<String, Long> ports = ImmutableMap.builder();
            for (JsonNode n : s.get("nics")) {
                if (n.hasNonNull("attachment")) {
                    att.put(n.get("name").asText(), ConnectPoint.deviceConnectPoint(n.get("attachment").asText()));
                }
                ports.put(n.get("name").asText(), n.get("port").asLong());
            }
            srv.add(new Server(s.get("name").asText(), DeviceId.deviceId(s.get("device_id").asText()),
                               Optional.ofNullable(s.get("agent")).filter(JsonNode::isTextual).map(JsonNode::asText),
                               Optional.ofNullable(s.get("tls")).filter(JsonNode::isObject)
                                       .map(t -> AgentTls.fromJson(t, "server " + s.get("name").asText())),
                               att.build(), ports.build()));
        }
        servers = srv.build();
        ImmutableList.Builder<Host> hs = ImmutableList.builder();
        for (JsonNode h : net.get("hosts")) {
            hs.add(new Host(h.get("name").asText(), h.get("ip").asText(), h.get("mac").asText(),
                            h.get("netns").asText(), ConnectPoint.deviceConnectPoint(h.get("attachment").asText())));
        }
        hosts = hs.build();
        ImmutableList.Builder<List<ConnectPoint>> ls = ImmutableList.builder();
        net.get("links").forEach(l -> ls.add(List.of(ConnectPoint.deviceConnectPoint(l.get(0).asText()),
                                                     ConnectPoint.deviceConnectPoint(l.get(1).asText()))));
        links = ls.build();
        ingress = points(net.get("ingress"));
        egress = points(net.get("egress"));
    }

    private static List<ConnectPoint> points(JsonNode a) {
        ImmutableList.Builder<ConnectPoint> b = ImmutableList.builder();
        a.forEach(p -> b.add(ConnectPoint.deviceConnectPoint(p.asText())));
        return b.build();
    }

    /** Reads a launcher state file; fails naming the file when it has no network section or is malformed. */
    public static NetworkFile read(Path stateFile) {
        JsonNode root;
        try {
            root = new ObjectMapper().readTree(stateFile.toFile());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read topology state " + stateFile + ": " + e.getMessage(), e);
        }
        JsonNode net = root == null ? null : root.get("network");
        if (net == null) {
            throw new IllegalArgumentException(stateFile + " has no 'network' section: is it a state file written "
                    + "by `topologies/topo up`?");
        }
        try {
            return new NetworkFile(stateFile, net);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(stateFile + ": " + e.getMessage(), e);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException(stateFile + ": malformed network section: " + e, e);
        }
    }

    public Optional<Host> host(String name) {
        return hosts.stream().filter(h -> h.name.equals(name)).findFirst();
    }
}
