package org.metron.app.rest.codec;

import com.fasterxml.jackson.databind.node.ObjectNode;
import org.metron.app.api.Tag;
import org.onosproject.codec.CodecContext;
import org.onosproject.codec.JsonCodec;

import java.util.Locale;

/** A group's tag: its type, the group number and the group's MAC. */
public final class TagCodec extends JsonCodec<Tag> {
    @Override
    public ObjectNode encode(Tag t, CodecContext context) {
        return context.mapper().createObjectNode().put("type", t.type().name().toLowerCase(Locale.ROOT))
                .put("group", t.group()).put("mac", t.groupMac().toString().toLowerCase(Locale.ROOT));
    }
}
