package org.metron.app.rest.codec;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.metron.agent.v1.NicCapabilities;
import org.metron.drivers.server.NicDispatch;
import org.onosproject.codec.CodecContext;
import org.onosproject.codec.JsonCodec;

/**
 * A NIC's dispatch: the mode it runs, the mode asked (absent when none was), whether the agent chose it ("auto"),
 * the modes possible, the tag types it steers, the probed capabilities (absent for a kernel interface, which is
 * not probed) and the refused modes with their reasons.
 */
public final class NicDispatchCodec extends JsonCodec<NicDispatch> {
    @Override
    public ObjectNode encode(NicDispatch d, CodecContext context) {
        ObjectNode n = context.mapper().createObjectNode();
        n.put("mode", d.active());
        if (!d.requested().isEmpty()) {
            n.put("requested", d.requested());
        }
        n.put("auto", d.automatic());
        n.put("summary", d.summary());
        d.possible().forEach(n.putArray("possible")::add);
        d.tagTypes().forEach(n.putArray("tagTypes")::add);
        if (d.probed()) {
            n.set("capabilities", capabilities(d, context));
        }
        ArrayNode refusals = n.putArray("refusals");
        for (NicDispatch.Refusal r : d.refusals()) {
            refusals.addObject().put("mode", r.mode()).put("reason", r.reason());
        }
        return n;
    }

    private static ObjectNode capabilities(NicDispatch d, CodecContext context) {
        NicCapabilities c = d.capabilities();
        ObjectNode cn = context.mapper().createObjectNode().put("driver", c.getDriver())
                .put("maxRxQueues", c.getMaxRxQueues()).put("rteFlow", c.getRteFlow())
                .put("rteFlowIsolate", c.getRteFlowIsolate()).put("rteFlowQueue", c.getRteFlowQueue())
                .put("rteFlowMark", c.getRteFlowMark()).put("rteFlowJump", c.getRteFlowJump())
                .put("vmdqPools", c.getVmdqPools()).put("rssOffloads", "0x" + Long.toHexString(c.getRssOffloads()))
                .put("retaSize", c.getRetaSize()).put("maxMacAddrs", c.getMaxMacAddrs())
                .put("vlanFilter", c.getVlanFilter());
        d.rteFlowErrors().forEach(cn.putArray("rteFlowErrors")::add);
        cn.put("summary", d.capabilitySummary());
        return cn;
    }
}
