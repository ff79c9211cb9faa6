package org.metron.synth.packet;

/** Big-endian reads and writes of a frame's header fields. */
final class Bytes {
    private Bytes() {
    }

    static int get16(byte[] f, int at) {
        return (f[at] & 0xff) << 8 | f[at + 1] & 0xff;
    }

    static long get32(byte[] f, int at) {
        return (long) get16(f, at) << 16 | get16(f, at + 2);
    }

    static long get48(byte[] f, int at) {
        return (long) get16(f, at) << 32 | get32(f, at + 2);
    }

    static long get64(byte[] f, int at) {
        return get32(f, at) << 32 | get32(f, at + 4);
    }

    static void put16raw(byte[] f, int at, int v) {
        f[at] = (byte) (v >> 8);
        f[at + 1] = (byte) v;
    }
}
