package org.metron.app.rest.codec;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.metron.app.scaling.ChainLoad;
import org.metron.app.scaling.GroupLoad;
import org.onosproject.codec.CodecContext;
import org.onosproject.codec.JsonCodec;

/**
 * A chain's latest load: its scaling bounds, each measured group's core load and per-class rates, and the groups
 * not measured, with why.
 */
public final class ChainLoadCodec extends JsonCodec<ChainLoad> {
    @Override
    public ObjectNode encode(ChainLoad c, CodecContext context) {
        ObjectNode n = context.mapper().createObjectNode().put("chain", c.chain().name()).put("server", c.server())
                .put("autoScale", c.autoScale()).put("minCores", c.minCores()).put("maxCores", c.maxCores());
        ArrayNode groups = n.putArray("groups");
        for (GroupLoad g : c.groups()) {
            ObjectNode gn = groups.addObject().put("id", g.groupId()).put("core", g.core()).put("load", g.load());
            ObjectNode rates = gn.putObject("classRates");
            g.classRates().forEach((k, v) -> rates.put(Integer.toString(k), v));
        }
        if (!c.unmeasured().isEmpty()) {
            // why no split or merge counts these groups now (docs/scaling.md#monitoring)
            ArrayNode unknown = n.putArray("unmeasured");
            c.unmeasured().forEach((id, why) -> unknown.addObject().put("id", id).put("reason", why));
        }
        return n;
    }
}
