package org.metron.openflow;

import org.onlab.packet.EthType;
import org.onlab.packet.TpPort;
import org.onlab.packet.VlanId;
import org.onosproject.net.PortNumber;
import org.onosproject.net.flow.DefaultTrafficTreatment;
import org.onosproject.net.flow.TrafficTreatment;
import org.onosproject.net.flow.instructions.Instruction;
import org.onosproject.net.flow.instructions.Instructions;
import org.onosproject.net.flow.instructions.L2ModificationInstruction;
import org.onosproject.net.flow.instructions.L3ModificationInstruction;
import org.onosproject.net.flow.instructions.L4ModificationInstruction;
import org.projectfloodlight.openflow.protocol.OFFactory;
import org.projectfloodlight.openflow.protocol.action.OFAction;
import org.projectfloodlight.openflow.protocol.action.OFActionOutput;
import org.projectfloodlight.openflow.protocol.action.OFActionPushVlan;
import org.projectfloodlight.openflow.protocol.action.OFActionSetField;
import org.projectfloodlight.openflow.protocol.instruction.OFInstruction;
import org.projectfloodlight.openflow.protocol.instruction.OFInstructionApplyActions;
import org.projectfloodlight.openflow.protocol.instruction.OFInstructionGotoTable;
import org.projectfloodlight.openflow.protocol.oxm.OFOxm;
import org.projectfloodlight.openflow.types.IPv4Address;
import org.projectfloodlight.openflow.types.IPv6Address;
import org.projectfloodlight.openflow.types.MacAddress;
import org.projectfloodlight.openflow.types.OFGroup;
import org.projectfloodlight.openflow.types.OFPort;
import org.projectfloodlight.openflow.types.OFVlanVidMatch;
import org.projectfloodlight.openflow.types.TableId;
import org.projectfloodlight.openflow.types.TransportPort;

import java.util.ArrayList;
import java.util.List;

/**
 * ONOS traffic treatments to OpenFlow 1.3 instructions and back: outputs, group and goto-table, and the header
 * rewrites (L2, L3, L4 modifications) as apply-actions set_field actions. Anything else is refused, naming the
 * rule or bucket, before anything is sent.
 */
final class TreatmentTranslator {
    private final OFFactory of;

    TreatmentTranslator(OFFactory of) {
        this.of = of;
    }

    // ---- ONOS -> OpenFlow ---------------------------------------------------------------------------------

    /** A treatment's instructions; {@code where} names its rule or bucket in errors. */
    List<OFInstruction> instructions(TrafficTreatment t, String where) {
        List<OFAction> actions = new ArrayList<>();
        List<OFInstruction> out = new ArrayList<>();
        for (Instruction i : t.allInstructions()) {
            switch (i.type()) {
                case NOACTION:
                    break;
                case OUTPUT:
                    actions.add(of.actions().output(
                            OFPort.of((int) ((Instructions.OutputInstruction) i).port().toLong()), 0xffff));
                    break;
                case L2MODIFICATION:
                    actions.add(l2((L2ModificationInstruction) i, where));
                    break;
                case L3MODIFICATION:
                    actions.add(l3((L3ModificationInstruction) i, where));
                    break;
                case L4MODIFICATION:
                    actions.add(l4((L4ModificationInstruction) i, where));
                    break;
                case GROUP:
                    actions.add(of.actions().group(OFGroup.of(((Instructions.GroupInstruction) i).groupId().id())));
                    break;
                case TABLE:
                    out.add(of.instructions().gotoTable(
                            TableId.of(((Instructions.TableTypeTransition) i).tableId())));
                    break;
                default:
                    throw unsupported(where, i);
            }
        }
        if (t.tableTransition() != null && out.isEmpty()) {
            out.add(of.instructions().gotoTable(TableId.of(t.tableTransition().tableId())));
        }
        // An empty instruction list drops the packet (the OpenFlow 1.3 meaning of "no action").
        if (!actions.isEmpty()) {
            out.add(0, of.instructions().applyActions(actions));
        }
        // wipeDeferred (ONOS's packet intercepts: punt + wipeDeferred) is CLEAR_ACTIONS, as FlowModBuilderVer13
        if (t.clearedDeferred()) {
            out.add(of.instructions().clearActions());
        }
        return out;
    }

    private OFAction l2(L2ModificationInstruction i, String where) {
        switch (i.subtype()) {
            case ETH_DST:
                return of.actions().setField(of.oxms().ethDst(MacAddress.of(
                        ((L2ModificationInstruction.ModEtherInstruction) i).mac().toBytes())));
            case ETH_SRC:
                return of.actions().setField(of.oxms().ethSrc(MacAddress.of(
                        ((L2ModificationInstruction.ModEtherInstruction) i).mac().toBytes())));
            case VLAN_PUSH:
                return of.actions().pushVlan(org.projectfloodlight.openflow.types.EthType.of(
                        ((L2ModificationInstruction.ModVlanHeaderInstruction) i).ethernetType().toShort() & 0xffff));
            case VLAN_POP:
                return of.actions().popVlan();
            case VLAN_ID:
                // OF1.3 set_field of vlan_vid carries the "present" bit (shared/notes/dataplane.md).
                return of.actions().setField(of.oxms().vlanVid(OFVlanVidMatch.ofVlan(
                        ((L2ModificationInstruction.ModVlanIdInstruction) i).vlanId().toShort())));
            default:
                throw unsupported(where, i);
        }
    }

    /** Address rewrites and TTL decrement: what a class the switch forwards alone may need (TO_EGRESS). */
    private OFAction l3(L3ModificationInstruction i, String where) {
        switch (i.subtype()) {
            case DEC_TTL:
                return of.actions().decNwTtl();
            // ONOS's setIpSrc/setIpDst give an IPV4_* subtype for IPv6 addresses too: the address decides
            case IPV4_SRC:
            case IPV6_SRC:
                return of.actions().setField(ip(i).isIp4() ? of.oxms().ipv4Src(IPv4Address.of(ip(i).toOctets()))
                        : of.oxms().ipv6Src(IPv6Address.of(ip(i).toOctets())));
            case IPV4_DST:
            case IPV6_DST:
                return of.actions().setField(ip(i).isIp4() ? of.oxms().ipv4Dst(IPv4Address.of(ip(i).toOctets()))
                        : of.oxms().ipv6Dst(IPv6Address.of(ip(i).toOctets())));
            default:
                throw unsupported(where, i);
        }
    }

    private static org.onlab.packet.IpAddress ip(L3ModificationInstruction i) {
        return ((L3ModificationInstruction.ModIPInstruction) i).ip();
    }

    private OFAction l4(L4ModificationInstruction i, String where) {
        TransportPort port = TransportPort.of(((L4ModificationInstruction.ModTransportPortInstruction) i).port()
                .toInt());
        switch (i.subtype()) {
            case TCP_SRC:
                return of.actions().setField(of.oxms().tcpSrc(port));
            case TCP_DST:
                return of.actions().setField(of.oxms().tcpDst(port));
            case UDP_SRC:
                return of.actions().setField(of.oxms().udpSrc(port));
            case UDP_DST:
                return of.actions().setField(of.oxms().udpDst(port));
            default:
                throw unsupported(where, i);
        }
    }

    private static IllegalArgumentException unsupported(String where, Instruction i) {
        return new IllegalArgumentException(where + ": instruction " + i
                + " is not supported by the OpenFlow 1.3 southbound");
    }

    // ---- OpenFlow -> ONOS ---------------------------------------------------------------------------------

    /** The treatment instructions were made from ({@link #instructions}' inverse); none is a drop. */
    static TrafficTreatment treatment(List<OFInstruction> instructions) {
        TrafficTreatment.Builder t = DefaultTrafficTreatment.builder();
        boolean any = false;
        for (OFInstruction i : instructions) {
            if (i instanceof OFInstructionGotoTable) {
                t.transition((int) ((OFInstructionGotoTable) i).getTableId().getValue());
                any = true;
            } else if (i instanceof org.projectfloodlight.openflow.protocol.instruction.OFInstructionClearActions) {
                t.wipeDeferred();
            } else if (i instanceof OFInstructionApplyActions) {
                for (OFAction a : ((OFInstructionApplyActions) i).getActions()) {
                    any = true;
                    action(t, a);
                }
            } else {
                throw new IllegalArgumentException("instruction " + i + " has no ONOS equivalent here");
            }
        }
        if (!any) {
            t.drop();
        }
        return t.build();
    }

    /** Adds the ONOS instruction an action was made from. */
    static void action(TrafficTreatment.Builder t, OFAction a) {
        if (a instanceof org.projectfloodlight.openflow.protocol.action.OFActionGroup) {
            t.group(org.onosproject.core.GroupId.valueOf(
                    ((org.projectfloodlight.openflow.protocol.action.OFActionGroup) a).getGroup().getGroupNumber()));
        } else if (a instanceof OFActionOutput) {
            t.setOutput(PortNumber.portNumber(((OFActionOutput) a).getPort().getPortNumber() & 0xffffffffL));
        } else if (a instanceof OFActionPushVlan) {
            t.pushVlan(new EthType(((OFActionPushVlan) a).getEthertype().getValue()));
        } else if (a instanceof org.projectfloodlight.openflow.protocol.action.OFActionPopVlan) {
            t.popVlan();
        } else if (a instanceof org.projectfloodlight.openflow.protocol.action.OFActionDecNwTtl) {
            t.decNwTtl();
        } else if (a instanceof OFActionSetField) {
            OFOxm<?> oxm = ((OFActionSetField) a).getField();
            Object v = oxm.getValue();
            switch (oxm.getMatchField().id) {
                case ETH_DST:
                    t.setEthDst(org.onlab.packet.MacAddress.valueOf(((MacAddress) v).getBytes()));
                    break;
                case ETH_SRC:
                    t.setEthSrc(org.onlab.packet.MacAddress.valueOf(((MacAddress) v).getBytes()));
                    break;
                case VLAN_VID:
                    t.setVlanId(VlanId.vlanId(((OFVlanVidMatch) v).getVlanVid().getVlan()));
                    break;
                case IPV4_SRC:
                    t.setIpSrc(org.onlab.packet.IpAddress.valueOf(((IPv4Address) v).getInt()));
                    break;
                case IPV4_DST:
                    t.setIpDst(org.onlab.packet.IpAddress.valueOf(((IPv4Address) v).getInt()));
                    break;
                case IPV6_SRC:
                    t.setIpSrc(org.onlab.packet.IpAddress.valueOf(org.onlab.packet.IpAddress.Version.INET6,
                            ((IPv6Address) v).getBytes()));
                    break;
                case IPV6_DST:
                    t.setIpDst(org.onlab.packet.IpAddress.valueOf(org.onlab.packet.IpAddress.Version.INET6,
                            ((IPv6Address) v).getBytes()));
                    break;
                case TCP_SRC:
                    t.setTcpSrc(TpPort.tpPort(((TransportPort) v).getPort()));
                    break;
                case TCP_DST:
                    t.setTcpDst(TpPort.tpPort(((TransportPort) v).getPort()));
                    break;
                case UDP_SRC:
                    t.setUdpSrc(TpPort.tpPort(((TransportPort) v).getPort()));
                    break;
                case UDP_DST:
                    t.setUdpDst(TpPort.tpPort(((TransportPort) v).getPort()));
                    break;
                default:
                    throw new IllegalArgumentException("set_field " + oxm + " has no ONOS equivalent here");
            }
        } else {
            throw new IllegalArgumentException("action " + a + " has no ONOS equivalent here");
        }
    }
}
