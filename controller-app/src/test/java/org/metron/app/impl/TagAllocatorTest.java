package org.metron.app.impl;

import org.metron.app.testing.TestSwitches;
import org.junit.Test;
import org.metron.app.api.ChainId;
import org.metron.app.api.MetronException;
import org.metron.app.api.Tag;
import org.metron.synth.TagType;
import org.metron.app.local.LocalStoreFactory;
import org.metron.app.store.ChainStore;
import org.onosproject.net.DeviceId;

import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

/** Allocation per server NIC, unique network-wide, all-or-nothing, released with the chain. */
public class TagAllocatorTest {
    private static final DeviceId S0 = DeviceId.deviceId("metron:server0");
    private static final DeviceId S1 = DeviceId.deviceId("metron:server1");
    private final ChainStore store = new ChainStore(new LocalStoreFactory(), new TestSwitches());
    private final TagAllocator tags = new TagAllocator(store.tags());

    @Test
    public void lowestFreeSkippingTagsTheAgentUses() {
        List<Tag> a = tags.allocate(S0, "eth0", TagType.MAC, ChainId.of("a"), List.of("g0", "g1"), Set.of(1, 3));
        assertEquals(List.of(Tag.of(TagType.MAC, 2), Tag.of(TagType.MAC, 4)), a);
        // another server's NIC never gets a tag in use elsewhere: transit switches forward on the tag alone
        List<Tag> b = tags.allocate(S1, "eth0", TagType.MAC, ChainId.of("b"), List.of("g0"), Set.of());
        assertEquals(List.of(Tag.of(TagType.MAC, 1)), b);
        // tags busy on another server's agent are that agent's business (not in our store): usable here
        List<Tag> c = tags.allocate(S1, "eth0", TagType.MAC, ChainId.of("c"), List.of("g0"), Set.of());
        assertEquals(List.of(Tag.of(TagType.MAC, 3)), c);
        assertEquals(4, tags.allocations().size());
        assertTrue(tags.allocations().stream().anyMatch(t -> t.server().equals(S1) && t.groupId().equals("g0")
                && t.chainId().equals(ChainId.of("c"))));
    }

    @Test
    public void releaseFreesOnlyThatChainsTags() {
        tags.allocate(S0, "eth0", TagType.VLAN, ChainId.of("a"), List.of("g0", "g1"), Set.of());
        tags.allocate(S0, "eth0", TagType.VLAN, ChainId.of("b"), List.of("g0"), Set.of());
        assertEquals(2, tags.release(ChainId.of("a")));
        assertEquals(1, tags.allocations().size());
        assertEquals(List.of(Tag.of(TagType.VLAN, 1)), tags.allocate(S0, "eth0", TagType.VLAN, ChainId.of("c"),
                List.of("g0"), Set.of()));
    }

    @Test
    public void exhaustionClaimsNothing() {
        Set<Integer> used = IntStream.rangeClosed(1, 4092).boxed().collect(Collectors.toSet());
        MetronException e = assertThrows(MetronException.class, () -> tags.allocate(S0, "eth0", TagType.VLAN,
                ChainId.of("a"), List.of("g0", "g1", "g2"), used));
        assertEquals(MetronException.Fault.IMPOSSIBLE_PLACEMENT, e.fault());
        assertTrue(e.getMessage(), e.getMessage().contains("g2") && e.getMessage().contains("1..4094"));
        assertEquals(Collections.emptyList(), List.copyOf(tags.allocations()));
        assertEquals(2, tags.peek(TagType.VLAN, 2, used).size());
    }
}
