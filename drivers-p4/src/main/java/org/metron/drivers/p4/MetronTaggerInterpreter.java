package org.metron.drivers.p4;

import com.google.common.collect.ImmutableMap;
import org.onlab.packet.MacAddress;
import org.onlab.packet.VlanId;
import org.onosproject.net.DeviceId;
import org.onosproject.net.PortNumber;
import org.onosproject.net.driver.AbstractHandlerBehaviour;
import org.onosproject.net.flow.TrafficTreatment;
import org.onosproject.net.flow.criteria.Criterion;
import org.onosproject.net.flow.instructions.Instruction;
import org.onosproject.net.flow.instructions.Instructions;
import org.onosproject.net.flow.instructions.L2ModificationInstruction;
import org.onosproject.net.packet.InboundPacket;
import org.onosproject.net.packet.OutboundPacket;
import org.onosproject.net.pi.model.PiMatchFieldId;
import org.onosproject.net.pi.model.PiPipelineInterpreter;
import org.onosproject.net.pi.model.PiTableId;
import org.onosproject.net.pi.runtime.PiAction;
import org.onosproject.net.pi.runtime.PiActionParam;
import org.onosproject.net.pi.runtime.PiPacketOperation;

import java.util.Collection;
import java.util.Map;
import java.util.Optional;

import static org.metron.drivers.p4.TaggerP4Names.*;

/**
 * Maps Metron's offload flow rules (the same ones it sends to OpenFlow switches) to the {@code tagger} table.
 * <ul>
 *   <li>criteria: in port, eth type, IPv4/IPv6 src/dst, IP protocol, TCP/UDP src/dst ports (port ranges come
 *       as {@code PiCriterion} range matches);</li>
 *   <li>treatments: {@code setEthDst(tag) + output} → set_tag_mac; {@code pushVlan + setVlanId(g) +
 *       setEthDst(tag) + output} → push_vlan_tag; {@code output} alone → forward; nothing or {@code drop()}
 *       → drop.</li>
 * </ul>
 * Anything else fails with a {@link PiInterpreterException} naming the instruction.
 */
public class MetronTaggerInterpreter extends AbstractHandlerBehaviour implements PiPipelineInterpreter {

    private static final Map<Criterion.Type, PiMatchFieldId> CRITERIA = ImmutableMap.<Criterion.Type, PiMatchFieldId>builder()
            .put(Criterion.Type.IN_PORT, INGRESS_PORT)
            .put(Criterion.Type.ETH_TYPE, ETH_TYPE)
            .put(Criterion.Type.IPV4_SRC, IPV4_SRC)
            .put(Criterion.Type.IPV4_DST, IPV4_DST)
            .put(Criterion.Type.IPV6_SRC, IPV6_SRC)
            .put(Criterion.Type.IPV6_DST, IPV6_DST)
            .put(Criterion.Type.IP_PROTO, IP_PROTO)
            .put(Criterion.Type.TCP_SRC, L4_SRC_PORT)
            .put(Criterion.Type.TCP_SRC_MASKED, L4_SRC_PORT)
            .put(Criterion.Type.UDP_SRC, L4_SRC_PORT)
            .put(Criterion.Type.UDP_SRC_MASKED, L4_SRC_PORT)
            .put(Criterion.Type.TCP_DST, L4_DST_PORT)
            .put(Criterion.Type.TCP_DST_MASKED, L4_DST_PORT)
            .put(Criterion.Type.UDP_DST, L4_DST_PORT)
            .put(Criterion.Type.UDP_DST_MASKED, L4_DST_PORT)
            .build();

    /** The single table is FlowRule table 0. */
    private static final int TAGGER_FLOW_TABLE = 0;
    /** bit<9> port_t in the program. */
    private static final long MAX_PORT = (1 << 9) - 1;

    @Override
    public Optional<PiMatchFieldId> mapCriterionType(Criterion.Type type) {
        return Optional.ofNullable(CRITERIA.get(type));
    }

    @Override
    public Optional<PiTableId> mapFlowRuleTableId(int flowRuleTableId) {
        return flowRuleTableId == TAGGER_FLOW_TABLE ? Optional.of(TAGGER) : Optional.empty();
    }

    @Override
    public PiAction mapTreatment(TrafficTreatment treatment, PiTableId piTableId) throws PiInterpreterException {
        if (!TAGGER.equals(piTableId)) {
            throw new PiInterpreterException("metron_tagger has no table " + piTableId + " (only " + TAGGER + ")");
        }
        PortNumber out = null;
        MacAddress tag = null;
        VlanId vid = null;
        boolean push = false;
        for (Instruction i : treatment.allInstructions()) {
            switch (i.type()) {
                case NOACTION:
                    break;
                case OUTPUT:
                    if (out != null) {
                        throw new PiInterpreterException("metron_tagger outputs to one port, got " + treatment);
                    }
                    out = ((Instructions.OutputInstruction) i).port();
                    break;
                case L2MODIFICATION:
                    L2ModificationInstruction l2 = (L2ModificationInstruction) i;
                    switch (l2.subtype()) {
                        case ETH_DST:
                            tag = ((L2ModificationInstruction.ModEtherInstruction) l2).mac();
                            break;
                        case VLAN_PUSH:
                            push = true;
                            break;
                        case VLAN_ID:
                            vid = ((L2ModificationInstruction.ModVlanIdInstruction) l2).vlanId();
                            break;
                        default:
                            throw new PiInterpreterException("metron_tagger cannot apply " + l2);
                    }
                    break;
                default:
                    throw new PiInterpreterException("metron_tagger cannot apply " + i);
            }
        }
        if (out == null) {
            if (tag != null || push || vid != null) {
                throw new PiInterpreterException("metron_tagger: a tagging treatment needs an output port: "
                                                         + treatment);
            }
            return PiAction.builder().withId(DROP).build();
        }
        PiActionParam port = new PiActionParam(PORT, port(out));
        if (push || vid != null) {
            if (!push || vid == null || tag == null) {
                throw new PiInterpreterException("metron_tagger: a VLAN tag needs pushVlan, setVlanId and setEthDst "
                                                         + "(02:4d:00:00:CC:CC) together, got " + treatment);
            }
            return PiAction.builder().withId(PUSH_VLAN_TAG)
                    .withParameter(new PiActionParam(VID, vid.toShort()))
                    .withParameter(new PiActionParam(TAG, tag.toBytes()))
                    .withParameter(port).build();
        }
        if (tag != null) {
            return PiAction.builder().withId(SET_TAG_MAC)
                    .withParameter(new PiActionParam(TAG, tag.toBytes())).withParameter(port).build();
        }
        return PiAction.builder().withId(FORWARD).withParameter(port).build();
    }

    private static short port(PortNumber p) throws PiInterpreterException {
        if (p.isLogical() || p.toLong() > MAX_PORT) {
            throw new PiInterpreterException("metron_tagger outputs to physical ports 0.." + MAX_PORT + ", got " + p);
        }
        return (short) p.toLong();
    }

    @Override
    public Collection<PiPacketOperation> mapOutboundPacket(OutboundPacket packet) throws PiInterpreterException {
        throw new PiInterpreterException("metron_tagger has no packet-out (no CPU port)");
    }

    @Override
    public InboundPacket mapInboundPacket(PiPacketOperation packetOperation, DeviceId deviceId)
            throws PiInterpreterException {
        throw new PiInterpreterException("metron_tagger has no packet-in (no CPU port)");
    }

    @Override
    public Optional<PiAction> getOriginalDefaultAction(PiTableId tableId) {
        return TAGGER.equals(tableId) ? Optional.of(PiAction.builder().withId(DROP).build()) : Optional.empty();
    }
}
