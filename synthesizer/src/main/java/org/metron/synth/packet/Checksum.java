package org.metron.synth.packet;

/** The Internet checksum (RFC 1071) and its incremental update (RFC 1624), as Click computes them. */
final class Checksum {
    private Checksum() {
    }

    /** The checksum to store for {@code len} bytes from {@code off} plus an initial sum (pseudo-header). */
    static int of(byte[] f, int off, int len, int initial) {
        long sum = initial & 0xffffffffL;
        int i = 0;
        for (; i + 1 < len; i += 2) {
            sum += (f[off + i] & 0xff) << 8 | f[off + i + 1] & 0xff;
        }
        if (i < len) {
            sum += (f[off + i] & 0xff) << 8;
        }
        while (sum >> 16 != 0) {
            sum = (sum & 0xffff) + (sum >> 16);
        }
        return (int) ~sum & 0xffff;
    }

    /** A checksum after one 16-bit word it covers changed from {@code was} to {@code now} (Click's update). */
    static int update(int csum, int was, int now) {
        int sum = (~csum & 0xffff) + (~was & 0xffff) + (now & 0xffff);
        sum = (sum & 0xffff) + (sum >> 16);
        return ~(sum + (sum >> 16)) & 0xffff;
    }
}
