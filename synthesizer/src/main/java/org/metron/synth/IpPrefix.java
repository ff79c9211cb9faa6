package org.metron.synth;

import java.math.BigInteger;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Arrays;
import java.util.Objects;

/**
 * An IPv4 or IPv6 prefix (address with host bits cleared + length). Immutable. Text form is the usual
 * {@code 10.0.0.0/8} / {@code 2001:db8::/32}, which ONOS's {@code IpPrefix.valueOf} also reads.
 */
public final class IpPrefix {
    private final boolean v6;
    private final BigInteger address;
    private final int length;

    private IpPrefix(boolean v6, BigInteger address, int length) {
        this.v6 = v6;
        this.length = length;
        int bits = v6 ? 128 : 32;
        BigInteger hostMask = BigInteger.ONE.shiftLeft(bits - length).subtract(BigInteger.ONE);
        this.address = address.andNot(hostMask);
    }

    /**
     * Creates a prefix from an unsigned address value; host bits are cleared.
     *
     * @param v6      true for IPv6 (128-bit), false for IPv4 (32-bit)
     * @param address address as an unsigned integer
     * @param length  prefix length, 0..32 or 0..128
     * @return the prefix
     */
    public static IpPrefix of(boolean v6, BigInteger address, int length) {
        int bits = v6 ? 128 : 32;
        if (length < 0 || length > bits) {
            throw new IllegalArgumentException("prefix length " + length + " out of range 0.." + bits);
        }
        if (address.signum() < 0 || address.bitLength() > bits) {
            throw new IllegalArgumentException("address " + address + " does not fit in " + bits + " bits");
        }
        return new IpPrefix(v6, address, length);
    }

    /**
     * Parses {@code addr[/len]}; a missing length means a host prefix.
     *
     * @param text prefix text
     * @return the prefix
     * @throws IllegalArgumentException naming the text if it is not an IP literal or the length is bad
     */
    public static IpPrefix parse(String text) {
        int slash = text.indexOf('/');
        String addr = slash < 0 ? text : text.substring(0, slash);
        boolean v6 = addr.indexOf(':') >= 0;
        if (!v6 && !addr.matches("\\d{1,3}(\\.\\d{1,3}){3}")) {
            throw new IllegalArgumentException("'" + text + "' is not an IPv4/IPv6 prefix");
        }
        byte[] bytes;
        try {
            bytes = InetAddress.getByName(addr).getAddress();
        } catch (UnknownHostException | SecurityException e) {
            throw new IllegalArgumentException("'" + text + "' is not an IPv4/IPv6 prefix");
        }
        if (bytes.length != (v6 ? 16 : 4)) {
            throw new IllegalArgumentException("'" + text + "' mixes IPv4 and IPv6 notation");
        }
        int len = v6 ? 128 : 32;
        if (slash >= 0) {
            try {
                len = Integer.parseInt(text.substring(slash + 1));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("bad prefix length in '" + text + "'");
            }
        }
        return of(v6, new BigInteger(1, bytes), len);
    }

    /** True for IPv6. */
    public boolean isIp6() {
        return v6;
    }

    /** Network address as an unsigned integer. */
    public BigInteger address() {
        return address;
    }

    /** Prefix length. */
    public int length() {
        return length;
    }

    /** Network address in dotted/colon notation. */
    public String addressString() {
        if (!v6) {
            long a = address.longValue();
            return ((a >>> 24) & 0xff) + "." + ((a >>> 16) & 0xff) + "." + ((a >>> 8) & 0xff) + "." + (a & 0xff);
        }
        byte[] raw = address.toByteArray();
        int n = v6 ? 16 : 4;
        byte[] out = new byte[n];
        int copy = Math.min(raw.length, n);
        System.arraycopy(raw, raw.length - copy, out, n - copy, copy);
        try {
            String s = InetAddress.getByAddress(out).getHostAddress();
            return v6 ? compressV6(s) : s;
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String compressV6(String full) {
        // InetAddress prints 2001:db8:0:0:0:0:0:1; print the RFC 5952 form so text is stable and short.
        String[] parts = full.split(":");
        int bestStart = -1;
        int bestLen = 0;
        for (int i = 0; i < parts.length;) {
            if (parts[i].equals("0")) {
                int j = i;
                while (j < parts.length && parts[j].equals("0")) {
                    j++;
                }
                if (j - i > bestLen && j - i > 1) {
                    bestStart = i;
                    bestLen = j - i;
                }
                i = j;
            } else {
                i++;
            }
        }
        if (bestStart < 0) {
            return full;
        }
        String head = String.join(":", Arrays.copyOfRange(parts, 0, bestStart));
        String tail = String.join(":", Arrays.copyOfRange(parts, bestStart + bestLen, parts.length));
        return head + "::" + tail;
    }

    @Override
    public String toString() {
        return addressString() + "/" + length;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof IpPrefix)) {
            return false;
        }
        IpPrefix p = (IpPrefix) o;
        return v6 == p.v6 && length == p.length && address.equals(p.address);
    }

    @Override
    public int hashCode() {
        return Objects.hash(v6, address, length);
    }
}
