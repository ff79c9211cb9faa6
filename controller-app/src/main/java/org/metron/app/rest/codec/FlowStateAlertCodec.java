package org.metron.app.rest.codec;

import com.fasterxml.jackson.databind.node.ObjectNode;
import org.metron.app.scaling.FlowStateAlert;
import org.onosproject.codec.CodecContext;
import org.onosproject.codec.JsonCodec;

/** A stateful element shedding flows: where, when, and its table's counters. */
public final class FlowStateAlertCodec extends JsonCodec<FlowStateAlert> {
    @Override
    public ObjectNode encode(FlowStateAlert a, CodecContext context) {
        return context.mapper().createObjectNode().put("at", a.atMs()).put("chain", a.chain().name())
                .put("group", a.group()).put("server", a.server().toString()).put("element", a.element())
                .put("evicted", a.evicted()).put("refused", a.refused()).put("growthFailures", a.growthFailures())
                .put("flows", a.flows()).put("capacity", a.capacity());
    }
}
