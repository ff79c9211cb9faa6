package org.metron.app.rest.codec;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.metron.app.api.Tag;
import org.metron.app.api.TrafficClassInfo;
import org.metron.app.rest.MetronText;
import org.onosproject.codec.CodecContext;
import org.onosproject.codec.JsonCodec;
import org.onosproject.net.flow.FlowRule;

import java.util.Locale;

/**
 * A traffic class: its entries in first-match order, each with where it is classified, what the chain does with
 * its packets ({@link MetronText#does}) and the switch rules it became (ONOS's FlowRule JSON and the rule's text,
 * {@link MetronText#rule}); then its group,
 * tag, core and server.
 */
public final class TrafficClassCodec extends JsonCodec<TrafficClassInfo> {
    @Override
    public ObjectNode encode(TrafficClassInfo tc, CodecContext context) {
        ObjectNode n = context.mapper().createObjectNode();
        n.put("chain", tc.chainId().name());
        n.put("id", tc.classId());
        ArrayNode entries = n.putArray("entries");
        for (TrafficClassInfo.Entry e : tc.entries()) {
            ObjectNode en = entries.addObject();
            en.put("index", e.index());
            en.put("match", e.match());
            en.put("classifiedAt", e.classification().name().toLowerCase(Locale.ROOT));
            en.put("does", MetronText.does(tc, e));
            ArrayNode rules = en.putArray("rules");
            // each with its text as the CLI and the GUI print it, so a view of the text matches REST's rule
            e.rules().forEach(f -> rules.add(context.encode(f, FlowRule.class).put("text", MetronText.rule(f))));
        }
        n.put("disposition", tc.disposition().name().toLowerCase(Locale.ROOT));
        n.put("operations", tc.operations());
        n.put("group", tc.groupId());
        if (tc.tag() != null) {
            n.set("tag", context.encode(tc.tag(), Tag.class));
            n.put("mac", tc.tag().classMac(tc.classId()).toString().toLowerCase(Locale.ROOT));
        }
        n.put("core", tc.core());
        n.put("server", MetronText.or(tc.server(), ""));
        n.put("needsServer", tc.needsServer());
        return n;
    }
}
