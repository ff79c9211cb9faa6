package org.metron.app.rest.codec;

import com.fasterxml.jackson.databind.node.ObjectNode;
import org.metron.app.api.RuleInfo;
import org.onosproject.codec.CodecContext;
import org.onosproject.codec.JsonCodec;
import org.onosproject.net.flow.FlowRule;

import java.util.Locale;

/**
 * A switch rule Metron installed: the chain and the rule's role, the rule as ONOS's FlowRule codec writes it
 * (id, appId, priority, deviceId, tableId, selector.criteria, treatment.instructions: the JSON of /onos/v1/flows),
 * and its counters with whether the device could be read.
 */
public final class RuleCodec extends JsonCodec<RuleInfo> {
    @Override
    public ObjectNode encode(RuleInfo r, CodecContext context) {
        ObjectNode n = context.mapper().createObjectNode();
        n.put("chain", r.chainId().name());
        n.put("role", r.role().name().toLowerCase(Locale.ROOT));
        n.setAll(context.encode(r.rule(), FlowRule.class));
        n.put("packets", r.packets());
        n.put("bytes", r.bytes());
        n.put("deviceRead", r.deviceRead());
        n.put("deviceError", r.deviceError());
        return n;
    }
}
