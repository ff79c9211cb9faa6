package org.metron.app.rest.codec;

import com.fasterxml.jackson.databind.node.ObjectNode;
import org.metron.app.api.Tag;
import org.metron.app.scaling.ScalingOperation;
import org.onosproject.codec.CodecContext;
import org.onosproject.codec.JsonCodec;

import java.util.Locale;

/** A split or merge in progress: its step, the group, the other group with its tag and core, when it started. */
public final class ScalingOperationCodec extends JsonCodec<ScalingOperation> {
    @Override
    public ObjectNode encode(ScalingOperation op, CodecContext context) {
        ObjectNode n = context.mapper().createObjectNode().put("chain", op.chain().name())
                .put("kind", op.kind().name().toLowerCase(Locale.ROOT)).put("step", op.step().name())
                .put("group", op.group()).put("other", op.other());
        n.set("otherTag", context.encode(op.otherTag(), Tag.class));
        return n.put("otherCore", op.otherCore()).put("startedAt", op.startMs());
    }
}
