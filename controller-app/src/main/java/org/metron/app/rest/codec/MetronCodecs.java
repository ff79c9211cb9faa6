package org.metron.app.rest.codec;

import org.metron.app.api.Chain;
import org.metron.app.api.DrainReport;
import org.metron.app.api.Placement;
import org.metron.app.api.RuleInfo;
import org.metron.app.api.ServerInfo;
import org.metron.app.api.Tag;
import org.metron.app.api.TagAllocation;
import org.metron.app.api.TrafficClassInfo;
import org.metron.app.api.ValidationReport;
import org.metron.app.scaling.BlackBoxStatus;
import org.metron.app.scaling.ChainLoad;
import org.metron.app.scaling.ChainScaling;
import org.metron.app.scaling.FlowStateAlert;
import org.metron.app.scaling.ScalingEvent;
import org.metron.app.scaling.ScalingOperation;
import org.metron.drivers.provider.ServerConfigErrors;
import org.metron.drivers.server.NicDispatch;
import org.onosproject.codec.CodecService;
import org.onosproject.codec.JsonCodec;

import java.util.List;

/**
 * The one list of Metron's codecs. Inside ONOS the app's component registers them with ONOS's CodecService when
 * it activates and takes them back when it deactivates; the embedded host registers the same list with its own
 * (ONOS's) CodecManager. ONOS types inside them (FlowRule, selector, treatment) use ONOS's codecs.
 */
public final class MetronCodecs {
    /** One type and its codec: typed, so registration needs no unchecked cast. */
    private static final class Entry<T> {
        final Class<T> type;
        final JsonCodec<T> codec;

        Entry(Class<T> type, JsonCodec<T> codec) {
            this.type = type;
            this.codec = codec;
        }

        void register(CodecService service) {
            service.registerCodec(type, codec);
        }
    }

    private static final List<Entry<?>> ALL = List.of(
            new Entry<>(Chain.class, new ChainCodec()),
            new Entry<>(DrainReport.class, new DrainReportCodec()),
            new Entry<>(BlackBoxStatus.class, new BlackBoxCodec()),
            new Entry<>(Tag.class, new TagCodec()),
            new Entry<>(TagAllocation.class, new TagAllocationCodec()),
            new Entry<>(Placement.class, new PlacementCodec()),
            new Entry<>(TrafficClassInfo.class, new TrafficClassCodec()),
            new Entry<>(ServerConfigErrors.Refused.class, new RefusedConfigCodec()),
            new Entry<>(ServerInfo.class, new ServerCodec()),
            new Entry<>(NicDispatch.class, new NicDispatchCodec()),
            new Entry<>(RuleInfo.class, new RuleCodec()),
            new Entry<>(ValidationReport.class, new ValidationCodec()),
            new Entry<>(ChainScaling.class, new ChainScalingCodec()),
            new Entry<>(ChainLoad.class, new ChainLoadCodec()),
            new Entry<>(ScalingEvent.class, new ScalingEventCodec()),
            new Entry<>(ScalingOperation.class, new ScalingOperationCodec()),
            new Entry<>(FlowStateAlert.class, new FlowStateAlertCodec()));

    private MetronCodecs() {
    }

    /** Registers every Metron codec with {@code service}. */
    public static void register(CodecService service) {
        ALL.forEach(e -> e.register(service));
    }

    /** Takes every Metron codec back from {@code service}. */
    public static void unregister(CodecService service) {
        ALL.forEach(e -> service.unregisterCodec(e.type));
    }

    /** The types the list covers. */
    public static List<Class<?>> types() {
        return ALL.stream().<Class<?>>map(e -> e.type).collect(java.util.stream.Collectors.toList());
    }
}
