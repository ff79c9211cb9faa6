package org.metron.app.rest.codec;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.metron.app.scaling.ChainLoad;
import org.metron.app.scaling.GroupLoad;
import org.onosproject.codec.CodecContext;
import org.onosproject.codec.JsonCodec;

/** A chain's latest load: its scaling bounds and each group's core load and per-class rates. */
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
        return n;
    }
}
