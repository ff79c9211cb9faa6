package org.metron.app.api;

import org.metron.synth.TagType;

import org.junit.Test;
import org.onosproject.net.DeviceId;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

/** Port shares of a chain's groups (docs/scaling.md#port-shares): unique across its groups on every server. */
public class PortSharesTest {
    private static final ChainId CHAIN = ChainId.of("c");
    private static final DeviceId HOME = DeviceId.deviceId("metron:a");
    private static final DeviceId AWAY = DeviceId.deviceId("metron:b");

    private static GroupAssignment group(String id, int tag, int core) {
        return new GroupAssignment(id, Tag.of(TagType.MAC, tag), core, List.of(tag));
    }

    private static Placement placement(List<GroupAssignment> groups) {
        return new Placement(CHAIN, Optional.of(HOME), "eth0", "eth0", Optional.empty(), "", groups);
    }

    @Test
    public void aNewGroupTakesTheLowestShareNoGroupHoldsOnAnyServer() {
        // core 0 on both servers: the per-core division gave these two the same ports
        Placement p = placement(List.of(group("g0", 1, 0).withPortShare(0),
                group("g0.1", 2, 0).withPortShare(2).onServer(AWAY, "eth1", "eth1"),
                group("g1", 3, 1).withPortShare(3)));
        assertEquals(1, p.freePortShare(Set.of()));
        assertEquals(4, p.freePortShare(Set.of(1)));
        assertEquals(Set.of(0, 2, 3), p.portShares());
        assertEquals("a group keeps its share on another server", 2, p.groups().get(1).portShare());
        assertEquals(2, p.groups().get(1).onItsServer().portShare());
    }

    @Test
    public void twoGroupsWithOneShareAreRefusedWhereverTheyRun() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> placement(List.of(
                group("g0", 1, 0).withPortShare(1),
                group("g0.1", 2, 0).withPortShare(1).onServer(AWAY, "eth1", "eth1"))));
        assertTrue(e.getMessage(), e.getMessage().contains("groups g0 and g0.1 both hold port share 1"));
        assertThrows(IllegalArgumentException.class, () -> group("g0", 1, 0).withPortShare(
                GroupAssignment.PORT_SHARES));
    }

    @Test
    public void aVersionPlacedBesideAnotherAvoidsItsSharesAndAFullChainIsNamed() {
        List<GroupAssignment> next = Placement.withPortShares(List.of(group("g0~v2", 4, 0), group("g1~v2", 5, 1)),
                Set.of(0, 1));
        assertEquals(2, next.get(0).portShare());
        assertEquals(3, next.get(1).portShare());
        List<GroupAssignment> all = new ArrayList<>();
        for (int s = 0; s < GroupAssignment.PORT_SHARES; s++) {
            all.add(group("g" + s, s + 1, s).withPortShare(s));
        }
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> placement(all).freePortShare(Set.of()));
        assertTrue(e.getMessage(), e.getMessage().contains("holds all 16 port shares"));
    }
}
