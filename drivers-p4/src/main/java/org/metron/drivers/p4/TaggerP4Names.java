package org.metron.drivers.p4;

import org.onosproject.net.pi.model.PiActionId;
import org.onosproject.net.pi.model.PiActionParamId;
import org.onosproject.net.pi.model.PiCounterId;
import org.onosproject.net.pi.model.PiMatchFieldId;
import org.onosproject.net.pi.model.PiTableId;

/** Names in metron_tagger.p4 / p4info.txt, the only place Java spells them. */
public final class TaggerP4Names {

    public static final PiTableId TAGGER = PiTableId.of("TaggerIngress.tagger");
    public static final PiCounterId TAGGER_COUNTER = PiCounterId.of("TaggerIngress.tagger_counter");

    public static final PiMatchFieldId INGRESS_PORT = PiMatchFieldId.of("ingress_port");
    public static final PiMatchFieldId ETH_TYPE = PiMatchFieldId.of("eth_type");
    public static final PiMatchFieldId IPV4_SRC = PiMatchFieldId.of("ipv4_src");
    public static final PiMatchFieldId IPV4_DST = PiMatchFieldId.of("ipv4_dst");
    public static final PiMatchFieldId IPV6_SRC = PiMatchFieldId.of("ipv6_src");
    public static final PiMatchFieldId IPV6_DST = PiMatchFieldId.of("ipv6_dst");
    public static final PiMatchFieldId IP_PROTO = PiMatchFieldId.of("ip_proto");
    public static final PiMatchFieldId L4_SRC_PORT = PiMatchFieldId.of("l4_src_port");
    public static final PiMatchFieldId L4_DST_PORT = PiMatchFieldId.of("l4_dst_port");

    public static final PiActionId SET_TAG_MAC = PiActionId.of("TaggerIngress.set_tag_mac");
    public static final PiActionId PUSH_VLAN_TAG = PiActionId.of("TaggerIngress.push_vlan_tag");
    public static final PiActionId FORWARD = PiActionId.of("TaggerIngress.forward");
    public static final PiActionId DROP = PiActionId.of("TaggerIngress.drop");

    public static final PiActionParamId TAG = PiActionParamId.of("tag");
    public static final PiActionParamId PORT = PiActionParamId.of("port");
    public static final PiActionParamId VID = PiActionParamId.of("vid");

    private TaggerP4Names() {
    }
}
