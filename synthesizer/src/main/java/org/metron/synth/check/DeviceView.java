package org.metron.synth.check;

import org.metron.synth.TargetProfile;
import org.metron.synth.hs.Field;
import org.metron.synth.packet.Packet;

/**
 * The field values an offload device matches a packet by, where they differ from Click's: a device that reads
 * no transport header in fragments ({@link TargetProfile#l4InFirstFragments()} false: OVS in OpenFlow's
 * "normal" fragment mode) sees the ports and ICMP type of every fragment as 0, first fragments included, and
 * the protocol of a later IPv6 fragment as its fragment header's (44): OVS stops reading there. (Unparseable headers and VLAN tags are already in the packet as a switch reads them: {@link
 * org.metron.synth.packet.HeaderCheck}.)
 */
final class DeviceView {
    /** IPv6 next header of a fragment header. */
    static final long IPV6_FRAGMENT_HEADER = 44;

    private DeviceView() {
    }

    static long[] of(Packet p, TargetProfile t) {
        boolean fragment = p.get(Field.IP_MF) == 1 || p.get(Field.IP_OFFSET) == 1;
        if (!fragment || t.l4InFirstFragments()) {
            return p.v;
        }
        long[] v = p.v.clone();
        v[Field.L4_SRC.ordinal()] = 0;
        v[Field.L4_DST.ordinal()] = 0;
        v[Field.ICMP_TYPE.ordinal()] = 0;
        if (p.isIp6() && p.get(Field.IP_OFFSET) == 1) {
            v[Field.IP_PROTO.ordinal()] = IPV6_FRAGMENT_HEADER;
        }
        return v;
    }
}
