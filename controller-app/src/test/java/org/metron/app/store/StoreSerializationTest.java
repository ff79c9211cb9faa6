package org.metron.app.store;

import org.junit.Test;
import org.metron.app.api.Chain;
import org.metron.app.api.ChainId;
import org.metron.app.api.ChainState;
import org.metron.app.api.Placement;
import org.metron.app.api.RuleInfo;
import org.metron.app.api.Tag;
import org.metron.app.api.TagAllocation;
import org.metron.synth.TagType;
import org.metron.app.spi.MetronMap;
import org.metron.app.testing.Fixtures;
import org.metron.app.testing.Fixtures.World;
import org.onosproject.net.DeviceId;
import org.onosproject.store.service.ConsistentMap;
import org.onosproject.store.service.ConsistentMapBuilder;
import org.onosproject.store.service.Serializer;
import org.onosproject.store.service.TestConsistentMap;

import java.util.Map;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

/** Everything Metron stores survives a Kryo round trip with the one namespace, and the ConsistentMap adapter. */
public class StoreSerializationTest {

    private static <T> T roundTrip(T value) {
        byte[] bytes = MetronSerializers.NAMESPACE.serialize(value);
        return MetronSerializers.NAMESPACE.deserialize(bytes);
    }

    @Test
    public void everyStoredValueOfADeployedChainRoundTrips() {
        World w = new World(1, Fixtures.synthesis(), 1);
        w.manager.submit(Fixtures.chainJson("rt", "vlan", 2, 2));
        ChainId id = ChainId.of("rt");
        Chain chain = w.store.chains().get(id).get().value();
        Placement p = w.store.placements().get(id).get().value();
        InstalledState installed = w.store.installed().get(id).get().value();
        BackupConfiguration backup = w.store.backups().get(id).get().value();
        assertEquals(chain, roundTrip(chain));
        assertEquals(p, roundTrip(p));
        assertEquals(installed, roundTrip(installed));
        assertEquals(backup, roundTrip(backup));
        // a placement whose class is divided between groups by source-port bits (docs/scaling.md#class-split)
        org.metron.app.api.GroupAssignment g = p.groups().get(0);
        int cls = g.classIds().get(0);
        Placement sliced = new Placement(p.chainId(), p.server(), p.nic(), p.egressNic(), p.offloadDevice(),
                p.offloadProfile(), java.util.List.of(new org.metron.app.api.GroupAssignment(g.groupId(), g.tag(),
                g.core(), g.classIds(), Map.of(cls, new org.metron.app.api.ClassSlice(1, 0))),
                new org.metron.app.api.GroupAssignment("g0.1", Tag.of(g.tag().type(), 99), g.core() + 1,
                        java.util.List.of(cls), Map.of(cls, new org.metron.app.api.ClassSlice(1, 1)))));
        assertEquals(sliced, roundTrip(sliced));
        assertEquals(Map.of(cls, new org.metron.app.api.ClassSlice(1, 1)),
                roundTrip(sliced).groups().get(1).slices());
        // a group scaled out to another server (docs/scaling.md#scale-out) keeps its server and NICs
        Placement out = new Placement(p.chainId(), p.server(), p.nic(), p.egressNic(), p.offloadDevice(),
                p.offloadProfile(), java.util.List.of(g, new org.metron.app.api.GroupAssignment("g0.1",
                Tag.of(g.tag().type(), 98), g.core(), java.util.List.of(cls)).withPortShare(1).onServer(
                org.onosproject.net.DeviceId.deviceId("metron:other"), "eth2", "eth3")));
        assertEquals(out, roundTrip(out));
        // and each group its port share (docs/scaling.md#port-shares)
        assertEquals(0, g.portShare());
        assertEquals(java.util.List.of(0, 1), roundTrip(out).groups().stream()
                .map(org.metron.app.api.GroupAssignment::portShare).collect(java.util.stream.Collectors.toList()));
        assertEquals(java.util.Optional.of(org.onosproject.net.DeviceId.deviceId("metron:other")),
                roundTrip(out).groups().get(1).server());
        assertEquals("eth3", roundTrip(out).groups().get(1).egressNic());
        assertFalse(installed.switchRules().isEmpty());
        for (InstalledRule r : installed.switchRules()) {
            InstalledRule back = roundTrip(r);
            assertTrue(back.rule().exactMatch(r.rule()));
            assertEquals(r.rule().treatment(), back.rule().treatment());
        }
        for (TagAllocation t : w.manager.tags()) {
            assertEquals(t, roundTrip(t));
            assertEquals(new TagKey(t.tag()), roundTrip(new TagKey(t.tag())));
        }
    }

    @Test
    public void consistentMapAdapterKeepsVersionsAndCas() {
        ConsistentMapBuilder<ChainId, Chain> b = TestConsistentMap.builder();
        b.withName(ChainStore.CHAINS);
        b.withSerializer(Serializer.using(MetronSerializers.NAMESPACE));
        ConsistentMap<ChainId, Chain> raw = b.build();
        MetronMap<ChainId, Chain> map = new ConsistentMetronMap<>(raw);
        ChainId id = ChainId.of("m");
        Chain c = new Chain(id, "{}", org.metron.app.api.Deployments.of(TagType.MAC, 1, 1, false,
                org.onosproject.net.ConnectPoint.deviceConnectPoint(Fixtures.S1 + "/1"),
                org.onosproject.net.ConnectPoint.deviceConnectPoint(Fixtures.S1 + "/3"), 1),
                ChainState.SUBMITTED, "", 0);
        assertTrue(map.putIfAbsent(id, c));
        assertFalse(map.putIfAbsent(id, c));
        long v = map.get(id).get().version();
        assertTrue(map.replace(id, v, c.withState(ChainState.ACTIVE, "")));
        assertFalse("stale version", map.replace(id, v, c.withState(ChainState.FAILED, "x")));
        assertEquals(ChainState.ACTIVE, map.snapshot().get(id).state());
        assertEquals(ChainState.ACTIVE, map.remove(id).get().state());
        assertTrue(map.snapshot().isEmpty());
    }

    @Test
    public void rolesAndTagsAreRegistered() {
        assertEquals(RuleInfo.Role.RETURN, roundTrip(RuleInfo.Role.RETURN));
        Map<TagKey, TagAllocation> m = Map.of(new TagKey(Tag.of(TagType.MAC, 9)), new TagAllocation(
                DeviceId.deviceId("metron:s"), "eth0", Tag.of(TagType.MAC, 9), ChainId.of("x"), "g0"));
        assertEquals(m, roundTrip(new java.util.HashMap<>(m)));
    }
}
