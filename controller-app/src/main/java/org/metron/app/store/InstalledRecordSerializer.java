package org.metron.app.store;

import com.esotericsoftware.kryo.Kryo;
import com.esotericsoftware.kryo.Serializer;
import com.esotericsoftware.kryo.io.Input;
import com.esotericsoftware.kryo.io.Output;
import org.metron.app.api.ChainId;
import org.onosproject.net.DeviceId;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * {@link InstalledRecord} with a format number first (as {@link ChainSerializer}): names as strings, flow ids as
 * 8 bytes each (hashes: a variable-length encoding would not shorten them), roles a byte each. A format this code
 * does not know fails loudly instead of being misread.
 */
final class InstalledRecordSerializer extends Serializer<InstalledRecord> {
    private static final int FORMAT = 1;

    InstalledRecordSerializer() {
        super(false, true);
    }

    @Override
    public void write(Kryo kryo, Output out, InstalledRecord r) {
        out.writeVarInt(FORMAT, true);
        out.writeString(r.chainId().name());
        out.writeString(r.server().map(DeviceId::toString).orElse(null));
        out.writeVarInt(r.nicRuleIds().size(), true);
        r.nicRuleIds().forEach(id -> out.writeVarLong(id, true));
        out.writeBoolean(r.pipeline());
        out.writeVarInt(r.devices().size(), true);
        for (InstalledRecord.DeviceRules d : r.devices()) {
            out.writeString(d.device().toString());
            out.writeVarInt(d.size(), true);
            out.writeLongs(d.ids());
            out.writeBytes(d.roles());
        }
    }

    @Override
    public InstalledRecord read(Kryo kryo, Input in, Class<InstalledRecord> type) {
        int format = in.readVarInt(true);
        if (format != FORMAT) {
            throw new IllegalStateException("installed record format " + format + " is newer than this code ("
                    + FORMAT + ")");
        }
        ChainId chain = ChainId.of(in.readString());
        String server = in.readString();
        int nics = in.readVarInt(true);
        List<Long> nicIds = new ArrayList<>(nics);
        for (int i = 0; i < nics; i++) {
            nicIds.add(in.readVarLong(true));
        }
        boolean pipeline = in.readBoolean();
        int n = in.readVarInt(true);
        List<InstalledRecord.DeviceRules> devices = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            DeviceId d = DeviceId.deviceId(in.readString());
            int size = in.readVarInt(true);
            long[] ids = in.readLongs(size);
            devices.add(new InstalledRecord.DeviceRules(d, ids, in.readBytes(size)));
        }
        return new InstalledRecord(chain, Optional.ofNullable(server).map(DeviceId::deviceId), devices, nicIds,
                pipeline);
    }
}
