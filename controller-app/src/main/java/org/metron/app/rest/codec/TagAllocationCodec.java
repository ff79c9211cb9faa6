package org.metron.app.rest.codec;

import com.fasterxml.jackson.databind.node.ObjectNode;
import org.metron.app.api.Tag;
import org.metron.app.api.TagAllocation;
import org.onosproject.codec.CodecContext;
import org.onosproject.codec.JsonCodec;

/** An allocated tag: the tag's fields, then where it is held (server, NIC) and by which chain's group. */
public final class TagAllocationCodec extends JsonCodec<TagAllocation> {
    @Override
    public ObjectNode encode(TagAllocation t, CodecContext context) {
        return context.encode(t.tag(), Tag.class).put("server", t.server().toString()).put("nic", t.nic())
                .put("chain", t.chainId().name()).put("groupId", t.groupId());
    }
}
