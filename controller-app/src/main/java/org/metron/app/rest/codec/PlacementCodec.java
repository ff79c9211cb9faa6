package org.metron.app.rest.codec;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.metron.app.api.GroupAssignment;
import org.metron.app.api.Placement;
import org.metron.app.api.Tag;
import org.metron.app.rest.MetronText;
import org.onosproject.codec.CodecContext;
import org.onosproject.codec.JsonCodec;

/** Where a chain runs: server, NICs, offload device and profile, and each group with its tag, core and classes. */
public final class PlacementCodec extends JsonCodec<Placement> {
    @Override
    public ObjectNode encode(Placement p, CodecContext context) {
        ObjectNode n = context.mapper().createObjectNode();
        n.put("chain", p.chainId().name());
        n.put("server", MetronText.or(p.server(), ""));
        n.put("nic", p.nic());
        n.put("egressNic", p.egressNic());
        n.put("offloadDevice", MetronText.or(p.offloadDevice(), ""));
        n.put("offloadProfile", p.offloadProfile());
        ArrayNode groups = n.putArray("groups");
        for (GroupAssignment g : p.groups()) {
            groups.add(group(p, g, context));
        }
        return n;
    }

    private static ObjectNode group(Placement p, GroupAssignment g, CodecContext context) {
        ObjectNode gn = context.mapper().createObjectNode();
        gn.put("id", g.groupId());
        gn.set("tag", context.encode(g.tag(), Tag.class));
        gn.put("core", g.core());
        // where it runs: the chain's server, or another one a scale-out placed it on (docs/scaling.md#scale-out)
        gn.put("server", MetronText.server(p, g));
        gn.put("remote", g.remote());
        if (g.remote()) {
            gn.put("nic", g.nic());
            gn.put("egressNic", g.egressNic());
        }
        if (g.portShare() != GroupAssignment.NO_PORT_SHARE) {
            // the part of the NAPT port ranges it maps new flows to (docs/scaling.md#port-shares)
            gn.put("portShare", g.portShare());
        }
        ArrayNode classes = gn.putArray("classes");
        g.classIds().forEach(classes::add);
        if (!g.slices().isEmpty()) {
            // the classes it holds only part of: the source-port bits of its part (docs/scaling.md#class-split)
            ObjectNode slices = gn.putObject("slices");
            g.slices().forEach((cls, sl) -> slices.putObject(Integer.toString(cls)).put("sportMask", sl.mask())
                    .put("sportValue", sl.value()).put("text", sl.toString()));
        }
        return gn;
    }
}
