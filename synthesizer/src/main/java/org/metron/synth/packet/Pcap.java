package org.metron.synth.packet;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.Closeable;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.Consumer;

/** Classic libpcap files of Ethernet frames (what tcpdump writes and tcpreplay reads). */
public final class Pcap {
    private static final int MAGIC = 0xa1b2c3d4;
    private static final int MAGIC_NS = 0xa1b23c4d;
    private static final int LINKTYPE_ETHERNET = 1;

    private Pcap() {
    }

    /** Writes frames one by one; close() flushes. */
    public static final class Writer implements Closeable {
        private final OutputStream out;
        private final ByteBuffer head = ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN);

        public Writer(Path path) throws IOException {
            out = new BufferedOutputStream(Files.newOutputStream(path), 1 << 16);
            ByteBuffer h = ByteBuffer.allocate(24).order(ByteOrder.LITTLE_ENDIAN);
            h.putInt(MAGIC).putShort((short) 2).putShort((short) 4).putInt(0).putInt(0).putInt(65535)
                    .putInt(LINKTYPE_ETHERNET);
            out.write(h.array());
        }

        public void write(byte[] frame) throws IOException {
            head.clear();
            head.putInt(0).putInt(0).putInt(frame.length).putInt(frame.length);
            out.write(head.array());
            out.write(frame);
        }

        @Override
        public void close() throws IOException {
            out.close();
        }
    }

    /**
     * Calls {@code each} with every frame of a file in order; an empty or header-only file has none (tcpdump
     * stopped before anything arrived).
     *
     * @throws IOException naming the file if it is not a pcap of Ethernet frames
     */
    public static void read(Path path, Consumer<byte[]> each) throws IOException {
        try (InputStream raw = new BufferedInputStream(Files.newInputStream(path), 1 << 16)) {
            DataInputStream in = new DataInputStream(raw);
            byte[] h = new byte[24];
            int got = in.read(h);
            if (got <= 0) {
                return;
            }
            if (got < 24) {
                in.readFully(h, got, 24 - got);
            }
            ByteBuffer hb = ByteBuffer.wrap(h);
            int magic = hb.getInt(0);
            ByteOrder order;
            if (magic == MAGIC || magic == MAGIC_NS) {
                order = ByteOrder.BIG_ENDIAN;
            } else if (Integer.reverseBytes(magic) == MAGIC || Integer.reverseBytes(magic) == MAGIC_NS) {
                order = ByteOrder.LITTLE_ENDIAN;
            } else {
                throw new IOException(path + ": not a pcap file (magic " + Integer.toHexString(magic) + ")");
            }
            hb.order(order);
            if (hb.getInt(20) != LINKTYPE_ETHERNET) {
                throw new IOException(path + ": link type " + hb.getInt(20) + ", expected Ethernet (1)");
            }
            byte[] rec = new byte[16];
            while (true) {
                try {
                    in.readFully(rec);
                } catch (EOFException e) {
                    return;
                }
                int caplen = ByteBuffer.wrap(rec).order(order).getInt(8);
                if (caplen < 0 || caplen > 1 << 18) {
                    throw new IOException(path + ": bad record length " + caplen);
                }
                byte[] frame = new byte[caplen];
                try {
                    in.readFully(frame);
                } catch (EOFException e) {
                    return;  // a capture cut short by its writer's stop: the torn last record is not a frame
                }
                each.accept(frame);
            }
        }
    }
}
