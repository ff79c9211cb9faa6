package org.metron.standin.storage;

import io.atomix.cluster.Node;
import io.atomix.cluster.discovery.BootstrapDiscoveryProvider;
import io.atomix.core.Atomix;
import io.atomix.protocols.raft.partition.RaftPartitionGroup;
import io.atomix.storage.StorageLevel;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.File;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.stream.Collectors;

/**
 * One member of the Atomix cluster an ONOS 2.7 cluster keeps its state in: the counterpart of ONOS's atomix-agent
 * 3.1.x run with the configuration ONOS's deployment tools write for it (a Raft management group "system" of one
 * partition and a Raft partition group "raft" of one partition per member, over every storage member, kept on disk;
 * bootstrap discovery of the storage members). The ONOS nodes are Atomix members of the same cluster that hold no
 * partition: they find these through their cluster.json's "storage" list (ONOS's AtomixManager with storage nodes).
 *
 * <p>Usage: {@code AtomixStorageMember <cluster id> <member id> <data dir> <id@ip:port>...} (every storage member,
 * this one included). Runs until killed; SIGTERM leaves the cluster cleanly.
 */
public final class AtomixStorageMember {
    private static final Logger LOG = LoggerFactory.getLogger(AtomixStorageMember.class);

    private AtomixStorageMember() {
    }

    public static void main(String[] args) throws InterruptedException {
        if (args.length < 4) {
            System.err.println("usage: AtomixStorageMember <cluster id> <member id> <data dir> <id@ip:port>...");
            System.exit(2);
        }
        String clusterId = args[0];
        String localId = args[1];
        File data = new File(args[2]);
        List<Node> members = new ArrayList<>();
        for (int i = 3; i < args.length; i++) {
            members.add(node(args[i]));
        }
        Node local = members.stream().filter(n -> n.id().id().equals(localId)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException(localId + " is not among the members given"));
        List<String> ids = members.stream().map(n -> n.id().id()).collect(Collectors.toList());
        Atomix atomix = Atomix.builder(AtomixStorageMember.class.getClassLoader())
                .withClusterId(clusterId)
                .withMemberId(localId)
                .withAddress(local.address())
                .withMembershipProvider(BootstrapDiscoveryProvider.builder().withNodes(members).build())
                .withManagementGroup(RaftPartitionGroup.builder("system").withNumPartitions(1).withMembers(ids)
                        .withStorageLevel(StorageLevel.DISK).withDataDirectory(new File(data, "system")).build())
                .addPartitionGroup(RaftPartitionGroup.builder("raft").withNumPartitions(ids.size()).withMembers(ids)
                        .withStorageLevel(StorageLevel.DISK).withDataDirectory(new File(data, "raft")).build())
                .build();
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            atomix.stop().join();
            stopped.countDown();
        }, "atomix-stop"));
        LOG.info("starting Atomix storage member {} at {} of cluster {} ({})", localId, local.address(), clusterId,
                 ids);
        atomix.start().join();
        // the test harness waits for this line
        LOG.info("Atomix storage member {} started: members {}", localId,
                 atomix.getMembershipService().getMembers());
        stopped.await();
    }

    /** A member given as id@ip:port. */
    private static Node node(String spec) {
        int at = spec.indexOf('@');
        int colon = spec.lastIndexOf(':');
        if (at <= 0 || colon < at) {
            throw new IllegalArgumentException("member " + spec + " is not id@ip:port");
        }
        return Node.builder().withId(spec.substring(0, at))
                .withAddress(spec.substring(at + 1, colon), Integer.parseInt(spec.substring(colon + 1))).build();
    }
}
