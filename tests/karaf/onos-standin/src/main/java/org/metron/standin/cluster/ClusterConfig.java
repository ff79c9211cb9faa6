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
 *  "nodes": [{"id": "n1", "ip": "10.77.0.1", "port": 9876}, {"id": "n2", ...}, {"id": "n3", ...}],
 *  "storage": [{"id": "atomix-1", "ip": "10.77.0.11", "port": 5679}, ...]}</pre>
 * "nodes" are the ONOS nodes (this one among them), "storage" the Atomix members holding the cluster's Raft
 * partitions, separate processes (ONOS's cluster.json "storage" list; ONOS 2.7 forms a multi-node cluster only so:
 * without storage nodes its nodes do not find each other, ../shared/notes/onos-runtime.md "Clustering"). Without
 * the file the stand-in is one node, as before.
 */
public final class ClusterConfig {
    /** One member: node id, IP address, Atomix port. */
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
    /** The ONOS nodes, this one included. */
    public final List<Member> members;
    /** The Atomix members holding the partitions. */
    public final List<Member> storage;

    private ClusterConfig(String name, Member local, List<Member> members, List<Member> storage) {
        this.name = name;
        this.local = local;
        this.members = members;
        this.storage = storage;
    }

    private static final ClusterConfig LOADED = load();

    /** The configured cluster, or null for a one-node stand-in. */
    public static ClusterConfig get() {
        return LOADED;
    }

    public static boolean clustered() {
        return LOADED != null;
    }

    private static List<Member> members(JsonNode list) {
        List<Member> out = new ArrayList<>();
        for (JsonNode n : list) {
            out.add(new Member(n.path("id").asText(), n.path("ip").asText(), n.path("port").asInt(9876)));
        }
        return Collections.unmodifiableList(out);
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
            List<Member> members = members(root.path("nodes"));
            Member local = members.stream().filter(m -> m.id.equals(localId)).findFirst()
                    .orElseThrow(() -> new IllegalArgumentException(f + ": node " + localId
                                                                    + " is not among its nodes"));
            List<Member> storage = members(root.path("storage"));
            if (storage.isEmpty()) {
                throw new IllegalArgumentException(f + ": no \"storage\" members (the Atomix cluster)");
            }
            return new ClusterConfig(root.path("name").asText("metron"), local, members, storage);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + f, e);
        }
    }
}
