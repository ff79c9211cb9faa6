package org.metron.app.store;

import com.esotericsoftware.kryo.Kryo;
import com.esotericsoftware.kryo.Serializer;
import com.esotericsoftware.kryo.io.Input;
import com.esotericsoftware.kryo.io.Output;
import org.metron.synth.Deployment;
import org.metron.synth.TagType;
import org.onlab.packet.MacAddress;
import org.onosproject.net.ConnectPoint;

/**
 * Writes a chain's {@link Deployment} in the bytes the controller's former {@code DeploymentSpec} had under Kryo's
 * field serializer (fields in name order; points and MACs as ONOS's ConnectPoint and MacAddress), so chain
 * records stored before the controller and the synthesizer shared one deployment type read back, and an
 * older instance of a cluster reads what this one writes. StoredFormatTest holds both directions.
 */
final class DeploymentSerializer extends Serializer<Deployment> {

    DeploymentSerializer() {
        super(false, true);
    }

    @Override
    public void write(Kryo kryo, Output out, Deployment d) {
        out.writeBoolean(d.autoScale());
        out.writeVarInt(d.cpuCores(), false);
        field(kryo, out, d.egressMac().map(MacAddress::valueOf).orElse(null), MacAddress.class);
        field(kryo, out, d.egressPoint().map(ConnectPoint::deviceConnectPoint).orElse(null), ConnectPoint.class);
        field(kryo, out, d.ingressPoint().map(ConnectPoint::deviceConnectPoint).orElse(null), ConnectPoint.class);
        out.writeVarInt(d.maxCpuCores(), false);
        out.writeVarInt(d.nics(), false);
        field(kryo, out, d.replyMac().map(MacAddress::valueOf).orElse(null), MacAddress.class);
        field(kryo, out, d.tagType(), TagType.class);
    }

    @Override
    public Deployment read(Kryo kryo, Input in, Class<Deployment> type) {
        boolean autoScale = in.readBoolean();
        int cpuCores = in.readVarInt(false);
        MacAddress egressMac = field(kryo, in, MacAddress.class);
        ConnectPoint egressPoint = field(kryo, in, ConnectPoint.class);
        ConnectPoint ingressPoint = field(kryo, in, ConnectPoint.class);
        int maxCpuCores = in.readVarInt(false);
        int nics = in.readVarInt(false);
        MacAddress replyMac = field(kryo, in, MacAddress.class);
        TagType tagType = field(kryo, in, TagType.class);
        return new Deployment(tagType, cpuCores, maxCpuCores, autoScale, text(ingressPoint), text(egressPoint), nics,
                text(egressMac), text(replyMac));
    }

    private static String text(Object o) {
        return o == null ? null : o.toString();
    }

    /** An object field as Kryo's field serializer writes it: no class id when the field's class is final. */
    private static void field(Kryo kryo, Output out, Object value, Class<?> type) {
        if (kryo.isFinal(type)) {
            kryo.writeObjectOrNull(out, value, type);
        } else {
            kryo.writeClassAndObject(out, value);
        }
    }

    @SuppressWarnings("unchecked")
    private static <T> T field(Kryo kryo, Input in, Class<T> type) {
        return kryo.isFinal(type) ? kryo.readObjectOrNull(in, type) : (T) kryo.readClassAndObject(in);
    }
}
