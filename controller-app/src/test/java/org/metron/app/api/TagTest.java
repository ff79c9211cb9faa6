package org.metron.app.api;

import org.metron.synth.TagType;

import org.junit.Test;
import org.onlab.packet.MacAddress;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

/** Tag header values per docs/contracts.md#tags. */
public class TagTest {
    @Test
    public void macTagsCarryGroupAndClass() {
        Tag t = Tag.of(TagType.MAC, 0xbeef);
        assertEquals(MacAddress.valueOf("02:4d:be:ef:00:05"), t.classMac(5));
        assertEquals(MacAddress.valueOf("02:4d:be:ef:00:00"), t.groupMac());
        assertEquals(MacAddress.valueOf("02:4d:be:ef:ff:fe"), t.egressMac());
        assertEquals(MacAddress.valueOf("02:4d:be:ef:ff:ff"), t.classMac(Tag.UNCLASSIFIED_CLASS));
        assertTrue("locally administered unicast", (t.groupMac().toBytes()[0] & 0x03) == 0x02);
    }

    @Test
    public void vlanTagsKeepTheClassInTheMac() {
        Tag t = Tag.of(TagType.VLAN, 4094);
        assertEquals(MacAddress.valueOf("02:4d:00:00:01:00"), t.classMac(256));
        assertEquals(4094, t.group());
    }

    @Test
    public void rangesAreEnforced() {
        assertThrows(IllegalArgumentException.class, () -> Tag.of(TagType.VLAN, 4095));
        assertThrows(IllegalArgumentException.class, () -> Tag.of(TagType.MAC, 0));
        assertThrows(IllegalArgumentException.class, () -> Tag.of(TagType.MAC, 1).classMac(Tag.EGRESS_CLASS));
        MetronException e = assertThrows(MetronException.class, () -> ChainId.of("a b"));
        assertEquals(MetronException.Fault.INVALID_CHAIN, e.fault());
    }
}
