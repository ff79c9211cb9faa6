package org.metron.app.impl;

import com.google.common.hash.Hasher;
import com.google.common.hash.Hashing;
import org.onlab.packet.IpPrefix;
import org.onosproject.core.ApplicationId;
import org.onosproject.net.DeviceId;
import org.onosproject.net.flow.TrafficSelector;
import org.onosproject.net.flow.criteria.Criterion;
import org.onosproject.net.flow.criteria.EthCriterion;
import org.onosproject.net.flow.criteria.EthTypeCriterion;
import org.onosproject.net.flow.criteria.IPCriterion;
import org.onosproject.net.flow.criteria.IPProtocolCriterion;
import org.onosproject.net.flow.criteria.PortCriterion;
import org.onosproject.net.flow.criteria.TcpPortCriterion;
import org.onosproject.net.flow.criteria.UdpPortCriterion;

/**
 * Flow rule ids of Metron's switch rules, in ONOS's layout (the application id in the top 16 bits, which is also
 * how the embedded host recognises its rules by OpenFlow cookie) with a 48-bit hash of what identifies an entry
 * in a switch table: device, table, priority and match. ONOS's own builder hashes the text of every criterion
 * into 32 bits: that was most of rule planning for a chain of tens of thousands of rules, and with 42k rules on
 * one device two different rules share a 32-bit id with a probability near 20%. With 48 bits that is about
 * 3 in a million, and {@link RulePlanner} refuses a plan in which it happens rather than dropping a rule.
 */
public final class FlowIds {
    private static final long HASH_BITS = 0xFFFF_FFFF_FFFFL;

    private FlowIds() {
    }

    /** The id of the entry with this match and priority in this device's table. */
    public static long of(ApplicationId app, DeviceId device, int table, int priority, TrafficSelector selector) {
        // String hash codes are cached: hashing the device's and the criterion types' text char by char was
        // most of the cost; ids need only be unique per device, the device merely seeds them
        Hasher h = Hashing.murmur3_128().newHasher().putInt(device.toString().hashCode()).putInt(table)
                .putInt(priority);
        for (Criterion c : selector.criteria()) { // a set sorted by type: the same order every time
            h.putInt(c.type().name().hashCode());
            put(h, c);
        }
        return ((long) app.id() << 48) | (h.hash().asLong() & HASH_BITS);
    }

    /** A criterion's values as numbers for the criteria Metron's rules consist of, as text for any other. */
    private static void put(Hasher h, Criterion c) {
        switch (c.type()) {
            case IN_PORT:
                h.putLong(((PortCriterion) c).port().toLong());
                return;
            case ETH_TYPE:
                h.putShort(((EthTypeCriterion) c).ethType().toShort());
                return;
            case IP_PROTO:
                h.putShort(((IPProtocolCriterion) c).protocol());
                return;
            case IPV4_SRC:
            case IPV4_DST:
            case IPV6_SRC:
            case IPV6_DST: {
                IpPrefix p = ((IPCriterion) c).ip();
                h.putBytes(p.address().toOctets()).putInt(p.prefixLength());
                return;
            }
            case TCP_SRC:
            case TCP_SRC_MASKED:
            case TCP_DST:
            case TCP_DST_MASKED: {
                TcpPortCriterion t = (TcpPortCriterion) c;
                h.putInt(t.tcpPort().toInt()).putInt(t.mask() == null ? -1 : t.mask().toInt());
                return;
            }
            case UDP_SRC:
            case UDP_SRC_MASKED:
            case UDP_DST:
            case UDP_DST_MASKED: {
                UdpPortCriterion u = (UdpPortCriterion) c;
                h.putInt(u.udpPort().toInt()).putInt(u.mask() == null ? -1 : u.mask().toInt());
                return;
            }
            case ETH_SRC:
            case ETH_SRC_MASKED:
            case ETH_DST:
            case ETH_DST_MASKED: {
                EthCriterion e = (EthCriterion) c;
                h.putLong(e.mac().toLong()).putLong(e.mask() == null ? -1 : e.mask().toLong());
                return;
            }
            default:
                h.putUnencodedChars(c.toString());
        }
    }
}
