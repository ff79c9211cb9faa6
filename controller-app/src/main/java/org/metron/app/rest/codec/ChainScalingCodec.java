package org.metron.app.rest.codec;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.metron.app.api.Placement;
import org.metron.app.scaling.ChainLoad;
import org.metron.app.scaling.ChainScaling;
import org.metron.app.scaling.FlowStateAlert;
import org.metron.app.scaling.ScalingEvent;
import org.metron.app.scaling.ScalingOperation;
import org.onosproject.codec.CodecContext;
import org.onosproject.codec.JsonCodec;

/** One chain's scaling view: groups (tag, core, classes), cores, latest load, operation in progress, history. */
public final class ChainScalingCodec extends JsonCodec<ChainScaling> {
    @Override
    public ObjectNode encode(ChainScaling s, CodecContext context) {
        ObjectNode n = context.mapper().createObjectNode();
        n.put("chain", s.chain().name());
        s.placement().ifPresent(p -> {
            n.set("groups", context.encode(p, Placement.class).get("groups"));
            ArrayNode cores = n.putArray("cores");
            p.cores().forEach(cores::add);
        });
        s.load().ifPresent(l -> n.set("load", context.encode(l, ChainLoad.class)));
        s.ingressPps().ifPresent(r -> n.put("ingressPps", r));
        n.set("inProgress", context.codec(ScalingOperation.class).encode(s.inProgress(), context));
        n.set("history", context.codec(ScalingEvent.class).encode(s.history(), context));
        n.set("flowStateAlerts", context.codec(FlowStateAlert.class).encode(s.flowStateAlerts(), context));
        return n;
    }
}
