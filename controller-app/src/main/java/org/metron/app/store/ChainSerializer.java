package org.metron.app.store;

import com.esotericsoftware.kryo.Kryo;
import com.esotericsoftware.kryo.KryoException;
import com.esotericsoftware.kryo.Registration;
import com.esotericsoftware.kryo.Serializer;
import com.esotericsoftware.kryo.io.Input;
import com.esotericsoftware.kryo.io.Output;
import org.metron.app.api.Chain;
import org.metron.app.api.ChainId;
import org.metron.app.api.ChainState;
import org.metron.app.api.ChainUpdate;
import org.metron.app.api.MetronException;
import org.metron.synth.Deployment;
import org.metron.app.api.PendingPart;
import org.onosproject.net.DeviceId;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The stored form of a {@link Chain}, written field by field behind a format number, so that a field added later
 * is a new format the reader still tells from the old ones. Until b792e96's successor the chain was stored by
 * Kryo's field serializer under another registration id, which {@link Legacy} still reads.
 */
final class ChainSerializer extends Serializer<Chain> {
    /** The format this version writes (2: with the desired update); the reader takes every format up to it. */
    static final int FORMAT = 2;

    ChainSerializer() {
        super(false, true);
    }

    @Override
    public void write(Kryo kryo, Output out, Chain c) {
        out.writeByte(FORMAT);
        out.writeString(c.id().name());
        out.writeString(c.json());
        kryo.writeObject(out, c.deployment());
        out.writeString(c.state().name()); // by name: the enum may grow anywhere
        out.writeString(c.reason());
        out.writeVarLong(c.version(), true);
        out.writeVarInt(c.pending().size(), true);
        for (PendingPart p : c.pending()) {
            out.writeString(p.device().toString());
            out.writeString(p.what());
            out.writeString(p.why());
        }
        out.writeBoolean(c.update().isPresent());
        c.update().ifPresent(u -> {
            out.writeString(u.json());
            kryo.writeObject(out, u.deployment());
            out.writeString(u.refusal().map(Enum::name).orElse(""));
            out.writeString(u.message());
        });
    }

    @Override
    public Chain read(Kryo kryo, Input in, Class<Chain> type) {
        int format = in.readByte();
        if (format < 1 || format > FORMAT) {
            throw new KryoException("chain record of format " + format + ": this version reads 1 to " + FORMAT
                    + " (written by a newer Metron?)");
        }
        ChainId id = ChainId.of(in.readString());
        String json = in.readString();
        Deployment d = kryo.readObject(in, Deployment.class);
        ChainState state = ChainState.valueOf(in.readString());
        String reason = in.readString();
        long version = in.readVarLong(true);
        int n = in.readVarInt(true);
        List<PendingPart> pending = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            pending.add(new PendingPart(DeviceId.deviceId(in.readString()), in.readString(), in.readString()));
        }
        Optional<ChainUpdate> update = Optional.empty();
        if (format >= 2 && in.readBoolean()) {
            String uj = in.readString();
            Deployment ud = kryo.readObject(in, Deployment.class);
            String refusal = in.readString();
            update = Optional.of(ChainUpdate.of(uj, ud, refusal.isEmpty() ? Optional.empty()
                    : Optional.of(MetronException.Fault.valueOf(refusal)), in.readString()));
        }
        return new Chain(id, json, d, state, reason, version, pending, update);
    }

    /**
     * Reads the chain records Kryo's default field serializer wrote (fields in name order, each object behind
     * a reference marker): b792e96's (deployment, id, json, reason, state, version) and its successor's, which had
     * a {@code pending} list between json and reason. Never writes: the chain's class is registered again, later,
     * with {@link ChainSerializer}, and Kryo writes a class with its last registration.
     */
    static final class Legacy extends Serializer<Chain> {
        /** Kryo's marker before a non-null object field (the reason); a class id is written as id + 2, never 1. */
        private static final int NOT_NULL = 1;

        Legacy() {
            super(false, true);
        }

        @Override
        public void write(Kryo kryo, Output output, Chain object) {
            throw new IllegalStateException("chain records are written with " + ChainSerializer.class.getName());
        }

        @Override
        @SuppressWarnings("unchecked")
        public Chain read(Kryo kryo, Input in, Class<Chain> type) {
            Deployment d = kryo.readObjectOrNull(in, Deployment.class);
            ChainId id = kryo.readObjectOrNull(in, ChainId.class);
            String json = kryo.readObjectOrNull(in, String.class);
            List<PendingPart> pending = List.of();
            int b = in.readByte() & 0xFF;
            if (b != NOT_NULL) {
                // the pending list: the varint id of its class (this byte first), then the list
                int classId = b & 0x7F;
                for (int shift = 7; (b & 0x80) != 0; shift += 7) {
                    b = in.readByte() & 0xFF;
                    classId |= (b & 0x7F) << shift;
                }
                Registration r = kryo.getRegistration(classId - 2);
                if (r == null || !List.class.isAssignableFrom(r.getType())) {
                    throw new KryoException("legacy chain record: no list class " + (classId - 2) + " in the namespace");
                }
                pending = (List<PendingPart>) kryo.readObject(in, r.getType(), r.getSerializer());
                b = in.readByte() & 0xFF;
            }
            if (b != NOT_NULL) {
                throw new KryoException("legacy chain record: no reason where one is expected (byte " + b + ")");
            }
            String reason = in.readString();
            ChainState state = kryo.readObjectOrNull(in, ChainState.class);
            long version = in.readVarLong(false);
            return new Chain(id, json, d, state, reason, version, pending);
        }
    }
}
