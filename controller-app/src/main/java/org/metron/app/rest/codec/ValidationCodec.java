package org.metron.app.rest.codec;

import com.fasterxml.jackson.databind.node.ObjectNode;
import org.metron.app.api.Placement;
import org.metron.app.api.ValidationReport;
import org.onosproject.codec.CodecContext;
import org.onosproject.codec.JsonCodec;

/** A dry run's answer: classes, groups, offload rules, and the placement or why there is none. */
public final class ValidationCodec extends JsonCodec<ValidationReport> {
    @Override
    public ObjectNode encode(ValidationReport v, CodecContext context) {
        ObjectNode n = context.mapper().createObjectNode();
        n.put("chain", v.chainId().name());
        n.put("classes", v.classes());
        n.put("groups", v.groups());
        n.put("offloadRules", v.offloadRules());
        n.put("placeable", v.placement().isPresent());
        v.placement().ifPresent(p -> n.set("placement", context.encode(p, Placement.class)));
        if (!v.placementError().isEmpty()) {
            n.put("placementError", v.placementError());
        }
        return n;
    }
}
