package org.metron.app.testing;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.metron.app.local.SingleAppCore;
import org.metron.app.rest.codec.MetronCodecs;
import org.onosproject.codec.CodecContext;
import org.onosproject.codec.CodecService;
import org.onosproject.codec.JsonCodec;
import org.onosproject.codec.impl.CodecManager;
import org.onosproject.core.CoreService;

/**
 * A codec context as REST and the CLI have one: ONOS's real CodecManager (its own codecs for FlowRule, selector,
 * treatment) with Metron's registered through {@link MetronCodecs}, and a CoreService naming {@link Fixtures#APP}.
 */
public final class Codecs implements CodecContext {
    /** Activated once: ONOS's CodecManager registers its ~100 codecs when it activates. */
    public static final Codecs CONTEXT = new Codecs();

    public final CodecManager service = new CodecManager();
    public final CoreService core = new SingleAppCore(Fixtures.APP);
    private final ObjectMapper mapper = new ObjectMapper();

    private Codecs() {
        service.activate();
        MetronCodecs.register(service);
    }

    /** {@code value}'s JSON as REST answers it. */
    public static <T> ObjectNode json(T value, Class<T> type) {
        return CONTEXT.encode(value, type);
    }

    @Override
    public ObjectMapper mapper() {
        return mapper;
    }

    @Override
    public <T> JsonCodec<T> codec(Class<T> type) {
        return service.getCodec(type);
    }

    @Override
    public <T> T getService(Class<T> type) {
        T s = offered(type);
        if (s == null) {
            throw new IllegalArgumentException("no " + type.getName() + " in the codec context");
        }
        return s;
    }

    /** The CodecService or CoreService the codecs ask for, null for another type (a test's ServiceDirectory). */
    public <T> T offered(Class<T> type) {
        return type == CoreService.class ? type.cast(core) : type == CodecService.class ? type.cast(service) : null;
    }
}
