package org.metron.app.rest.codec;

import com.fasterxml.jackson.databind.node.ObjectNode;
import org.metron.app.scaling.ScalingEvent;
import org.onosproject.codec.CodecContext;
import org.onosproject.codec.JsonCodec;

import java.util.Locale;

/** A scaling decision and how it ended: groups and cores before and after, moved classes, timings. */
public final class ScalingEventCodec extends JsonCodec<ScalingEvent> {
    @Override
    public ObjectNode encode(ScalingEvent e, CodecContext context) {
        ObjectNode n = context.mapper().createObjectNode();
        n.put("at", e.atMs());
        n.put("chain", e.chain().name());
        n.put("kind", e.kind().name().toLowerCase(Locale.ROOT));
        e.groups().forEach(n.putArray("groups")::add);
        e.coresBefore().forEach(n.putArray("coresBefore")::add);
        e.coresAfter().forEach(n.putArray("coresAfter")::add);
        e.moved().forEach(n.putArray("movedClasses")::add);
        return n.put("slice", e.slice()).put("reason", e.reason()).put("outcome", e.outcome().name())
                .put("detail", e.detail()).put("reactionMs", e.reactionMs()).put("durationMs", e.durationMs())
                .put("steps", e.steps());
    }
}
