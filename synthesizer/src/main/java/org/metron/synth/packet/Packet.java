package org.metron.synth.packet;

import org.metron.synth.hs.Field;

import java.util.Arrays;

/**
 * A packet as the reference interpreter and the synthesized-side evaluator see it: one unsigned value per
 * header {@link Field} plus the L4 payload (for DPI) and what CheckIPHeader makes of its frame
 * ({@link HeaderCheck}; packets of the model are {@link HeaderCheck#VALID}). Fields absent from the packet
 * (ports of ICMP and of non-first fragments, IPv4 addresses of IPv6) are 0. Mutable: elements rewrite it in
 * place; {@link #copy()} before running it twice.
 */
public final class Packet {
    /** Field values indexed by {@link Field#ordinal()}. */
    public final long[] v;
    /** Transport payload bytes. */
    public final byte[] payload;
    /** What CheckIPHeader makes of the frame. */
    public final HeaderCheck check;

    public Packet(long[] v, byte[] payload) {
        this(v, payload, HeaderCheck.VALID);
    }

    public Packet(long[] v, byte[] payload, HeaderCheck check) {
        this.v = v;
        this.payload = payload;
        this.check = check;
    }

    /** An all-zero packet. */
    public static Packet empty() {
        return new Packet(new long[Field.COUNT], new byte[0]);
    }

    public long get(Field f) {
        return v[f.ordinal()];
    }

    public void set(Field f, long value) {
        v[f.ordinal()] = value;
    }

    public boolean isIp6() {
        return v[Field.ETH_TYPE.ordinal()] == Field.ETH_IP6;
    }

    public Packet copy() {
        return new Packet(v.clone(), payload, check);
    }

    @Override
    public String toString() {
        return PacketText.format(this);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Packet && Arrays.equals(v, ((Packet) o).v) && Arrays.equals(payload, ((Packet) o).payload)
                && check == ((Packet) o).check;
    }

    @Override
    public int hashCode() {
        return (Arrays.hashCode(v) * 31 + Arrays.hashCode(payload)) * 31 + check.hashCode();
    }
}
