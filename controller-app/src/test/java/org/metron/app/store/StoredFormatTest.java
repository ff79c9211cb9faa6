package org.metron.app.store;

import org.metron.app.api.Deployments;

import org.junit.Test;
import org.metron.app.api.Chain;
import org.metron.app.api.ChainId;
import org.metron.app.api.ChainState;
import org.metron.app.api.ChainUpdate;
import org.metron.app.api.Deployments;
import org.metron.app.api.MetronException;
import org.metron.app.api.Tag;
import org.metron.synth.Deployment;
import org.metron.app.api.PendingPart;
import org.metron.synth.TagType;
import org.metron.app.scaling.ScalingDecision;
import org.metron.app.scaling.ScalingEvent;
import org.metron.app.scaling.ScalingStore;
import org.onlab.packet.MacAddress;
import org.onosproject.net.ConnectPoint;
import org.onosproject.net.DeviceId;

import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotEquals;

/**
 * Records an older Metron stored read back in this one (an ONOS cluster's maps outlive an app upgrade, the
 * embedded host keeps its store on disk). The files under src/test/resources/store were written by the code of
 * the commit each is named after (b792e96, 8d01de4), with that commit's MetronSerializers / ScalingStore.
 */
public class StoredFormatTest {
    private static final String JSON =
            "{\"name\": \"web\", \"nfs\": [{\"name\": \"fw\", \"click\": \"IPFilter(allow all)\"}]}";
    private static final Deployment D = Deployments.of(TagType.MAC, 2, 4, true,
            ConnectPoint.deviceConnectPoint("of:0000000000000001/1"),
            ConnectPoint.deviceConnectPoint("of:0000000000000002/1"), 1);

    private static byte[] file(String name) throws IOException {
        try (InputStream in = StoredFormatTest.class.getResourceAsStream("/store/" + name)) {
            return in.readAllBytes();
        }
    }

    private static Chain chain(String file) throws IOException {
        return MetronSerializers.NAMESPACE.deserialize(file(file));
    }

    @Test
    public void chainRecordsOfB792e96ReadBack() throws IOException {
        assertEquals(new Chain(ChainId.of("web"), JSON, D, ChainState.ACTIVE, "", 7),
                chain("chain-b792e96-active.bin"));
        assertEquals(new Chain(ChainId.of("fw-napt"), JSON, D, ChainState.FAILED, "deploying pipeline fw-napt on "
                + "agent 10.0.0.1:50051 failed: \u00e9 UNAVAILABLE", 3), chain("chain-b792e96-failed.bin"));
        assertEquals(new Chain(ChainId.of("gone"), JSON, D, ChainState.REMOVING, "removal incomplete: pipeline "
                + "gone on of:00", 12), chain("chain-b792e96-removing.bin"));
    }

    @Test
    public void chainRecordsWithThePendingFieldOf8d01de4ReadBack() throws IOException {
        assertEquals(new Chain(ChainId.of("web"), JSON, D, ChainState.DEGRADED, "server of:00 became unavailable",
                9), chain("chain-8d01de4-degraded.bin"));
    }

    @Test
    public void aChainIsWrittenInTheFormatThatKeepsItsFieldsApart() throws IOException {
        Chain c = new Chain(ChainId.of("web"), JSON, D, ChainState.REMOVING, "deleted", 4,
                List.of(new PendingPart(DeviceId.deviceId("metron:s1"), "pipeline web", "agent down")));
        byte[] bytes = MetronSerializers.NAMESPACE.serialize(c);
        assertEquals(c, MetronSerializers.NAMESPACE.deserialize(bytes));
        assertEquals(c, ScalingStore.NAMESPACE.deserialize(ScalingStore.NAMESPACE.serialize(c)));
        // not under the old registration (505, varint 507 = 0xfb 0x03), which only reads
        assertNotEquals(file("chain-b792e96-active.bin")[0], bytes[0]);
    }

    @Test
    public void aScalingHistoryOfB792e96ReadsBack() throws IOException {
        List<ScalingEvent> h = ScalingStore.NAMESPACE.deserialize(file("scaling-history-b792e96.bin"));
        assertEquals(1, h.size());
        ScalingEvent e = h.get(0);
        assertEquals(ChainId.of("web"), e.chain());
        assertEquals(ScalingDecision.Kind.SPLIT, e.kind());
        assertEquals(ScalingEvent.Outcome.DONE, e.outcome());
        assertEquals(List.of("g0", "g0s1"), e.groups());
        assertEquals("sport bit 0", e.slice());
    }

    /**
     * Written by 9e3ae33, when the controller had a deployment type of its own (DeploymentSpec, ConnectPoint and
     * MacAddress fields) and a TagType of its own: the shared types read them back and write the same bytes.
     */
    @Test
    public void deploymentsAndTagsOf9e3ae33ReadBackAndAreWrittenTheSame() throws IOException {
        Deployment full = Deployments.of(TagType.VLAN, 2, 6, true,
                ConnectPoint.deviceConnectPoint("of:0000000000000001/3"),
                ConnectPoint.deviceConnectPoint("of:0000000000000002/4"), 2,
                MacAddress.valueOf("02:00:00:00:00:02"), MacAddress.valueOf("02:00:00:00:00:01"));
        Deployment plain = Deployments.of(TagType.MAC, 1, 1, false,
                ConnectPoint.deviceConnectPoint("of:0000000000000001/1"),
                ConnectPoint.deviceConnectPoint("of:0000000000000002/1"), 1);
        Chain c = new Chain(ChainId.of("web"), "{\"name\":\"web\"}", full, ChainState.ACTIVE, "r", 5, List.of(),
                Optional.of(ChainUpdate.of("{\"name\":\"web2\"}", plain,
                        Optional.of(MetronException.Fault.INVALID_CHAIN), "m")));
        byte[] stored = file("chain-9e3ae33-update.bin");
        assertEquals(c, chain("chain-9e3ae33-update.bin"));
        assertArrayEquals(stored, MetronSerializers.NAMESPACE.serialize(c));
        List<Tag> tags = new ArrayList<>(List.of(Tag.of(TagType.MAC, 300), Tag.of(TagType.VLAN, 7)));
        assertEquals(tags, MetronSerializers.NAMESPACE.deserialize(file("tags-9e3ae33.bin")));
        assertArrayEquals(file("tags-9e3ae33.bin"), MetronSerializers.NAMESPACE.serialize(tags));
    }

    /**
     * An installed state as a459af3 stored it, with the rules themselves: it still reads, and reads as the record
     * that replaced it (the flow ids and roles per device in install order, the server part), which the installed
     * view then resolves against the switches.
     */
    @Test
    public void installedStateOfA459af3ReadsAsItsIds() throws IOException {
        InstalledState old = MetronSerializers.NAMESPACE.deserialize(file("installed-a459af3.bin"));
        assertEquals(3, old.switchRules().size());
        InstalledRecord r = InstalledRecord.of(old);
        assertEquals(ChainId.of("web"), r.chainId());
        assertEquals(Optional.of(DeviceId.deviceId("metron:10.0.0.1:50051")), r.server());
        assertEquals(List.of(7L, 8L), r.nicRuleIds());
        assertEquals(true, r.pipeline());
        assertEquals(2, r.devices().size());
        assertEquals(DeviceId.deviceId("of:0000000000000002"), r.devices().get(0).device());
        assertEquals(0x004d000000000002L, r.devices().get(0).id(0));
        assertEquals(org.metron.app.api.RuleInfo.Role.TRANSIT, r.devices().get(0).role(0));
        assertEquals(2, r.devices().get(1).size());
        assertEquals(0x004d000000000003L, r.devices().get(1).id(1));
        assertEquals(r, MetronSerializers.NAMESPACE.deserialize(MetronSerializers.NAMESPACE.serialize(r)));
    }
}
