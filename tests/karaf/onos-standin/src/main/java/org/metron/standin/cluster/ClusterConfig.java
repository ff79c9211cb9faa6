package org.metron.standin.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * This node's cluster configuration, the stand-in's counterpart of ONOS 2.7's {@code config/cluster.json}
 * (core-net's ClusterMetadataManager reads that one): Karaf's {@code etc/metron-cluster.json}, e.g.
 * <pre>{"name": "metron", "node": "n1",
 *  "nodes": [{"id": "n1", "ip": "10.77.0.1", "port": 9876}, {"id": "n2", ...}, {"id": "n3", ...}]}</pre>
 * Every listed node is an Atomix member holding the Raft partitions (ONOS's "test mode" cluster.json without
 * storage nodes, where the ONOS nodes themselves form Raft). Without the file the stand-in is one node, as before.
 */
public final class ClusterConfig {
    /** One member: ONOS node id, IP address, Atomix port. */
    public static final class Member {
        public final String id;
        public final String ip;
        public final int port;

        Member(String id, String ip, int port) {
            this.id = id;
            this.ip = ip;
            this.port = port;
        }
    }

    public final String name;
    public final Member local;
    public final List<Member> members;

    private ClusterConfig(String name, Member local, List<Member> members) {
        this.name = name;
        this.local = local;
        this.members = members;
    }

    private static final ClusterConfig LOADED = load();

    /** The configured cluster, or null for a one-node stand-in. */
    public static ClusterConfig get() {
        return LOADED;
    }

    public static boolean clustered() {
        return LOADED != null;
    }

    private static ClusterConfig load() {
        String etc = System.getProperty("karaf.etc");
        File f = new File(System.getProperty("metron.cluster.config",
                                             (etc == null ? "etc" : etc) + File.separator + "metron-cluster.json"));
        if (!f.isFile()) {
            return null;
        }
        try {
            JsonNode root = new ObjectMapper().readTree(f);
            String localId = root.path("node").asText();
            List<Member> members = new ArrayList<>();
            Member local = null;
            for (JsonNode n : root.path("nodes")) {
                Member m = new Member(n.path("id").asText(), n.path("ip").asText(), n.path("port").asInt(9876));
                members.add(m);
                if (m.id.equals(localId)) {
                    local = m;
                }
            }
            if (local == null) {
                throw new IllegalArgumentException(f + ": node " + localId + " is not among its nodes");
            }
            return new ClusterConfig(root.path("name").asText("metron"), local,
                                     Collections.unmodifiableList(members));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + f, e);
        }
    }
}
