package org.metron.openflow;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import org.projectfloodlight.openflow.protocol.OFMessage;

/**
 * The ONF bundle extension for OpenFlow 1.3 (ONF EXT-230; OVS implements it), encoded by hand because
 * openflowj only has bundle messages for OpenFlow 1.4+. Wire layout: an OFPT_EXPERIMENTER header
 * (ofp_header, experimenter = ONF, exp_type) followed by the bundle body.
 */
final class OnfBundle {
    static final int ONF_EXPERIMENTER = 0x4F4E4600;
    static final int CONTROL = 2300;
    static final int ADD_MESSAGE = 2301;

    static final int OPEN_REQUEST = 0;
    static final int OPEN_REPLY = 1;
    static final int CLOSE_REQUEST = 2;
    static final int CLOSE_REPLY = 3;
    static final int COMMIT_REQUEST = 4;
    static final int COMMIT_REPLY = 5;
    static final int DISCARD_REQUEST = 6;
    static final int DISCARD_REPLY = 7;

    /** Apply all or nothing, in order. */
    static final int FLAGS_ATOMIC_ORDERED = 0x3;

    private static final byte OF13 = 0x04;
    private static final byte OFPT_EXPERIMENTER = 4;

    private OnfBundle() {
    }

    /** A bundle control message (open, close, commit, discard). */
    static ByteBuf control(ByteBufAllocator alloc, int xid, int bundleId, int type, int flags) {
        ByteBuf b = header(alloc, 24, xid, CONTROL);
        b.writeInt(bundleId).writeShort(type).writeShort(flags);
        return b;
    }

    /**
     * Appends one bundle-add carrying {@code inner} to {@code out}, with {@code xid} as the xid of both the add
     * and the inner message (OVS requires them equal; errors name it). Writes in place, no intermediate copy.
     */
    static void writeAdd(ByteBuf out, int xid, int bundleId, int flags, OFMessage inner) {
        int start = out.writerIndex();
        out.writeByte(OF13).writeByte(OFPT_EXPERIMENTER).writeShort(0).writeInt(xid);
        out.writeInt(ONF_EXPERIMENTER).writeInt(ADD_MESSAGE);
        out.writeInt(bundleId).writeShort(0).writeShort(flags);
        int innerStart = out.writerIndex();
        inner.writeTo(out);
        out.setInt(innerStart + 4, xid);
        int length = out.writerIndex() - start;
        if (length > 0xffff) {
            throw new IllegalArgumentException("bundled message of " + length + " bytes exceeds OpenFlow's 65535");
        }
        out.setShort(start + 2, length);
    }

    private static ByteBuf header(ByteBufAllocator alloc, int length, int xid, int expType) {
        ByteBuf b = alloc.buffer(length);
        b.writeByte(OF13).writeByte(OFPT_EXPERIMENTER).writeShort(length).writeInt(xid);
        b.writeInt(ONF_EXPERIMENTER).writeInt(expType);
        return b;
    }

    /** A bundle control reply from the switch. */
    static final class ControlReply {
        final int xid;
        final int bundleId;
        final int type;

        ControlReply(int xid, int bundleId, int type) {
            this.xid = xid;
            this.bundleId = bundleId;
            this.type = type;
        }
    }

    /** An ONF experimenter error (bundle failures): openflowj cannot parse these. */
    static final class Error {
        final int xid;
        final int code;

        Error(int xid, int code) {
            this.xid = xid;
            this.code = code;
        }

        @Override
        public String toString() {
            return "ONF bundle error " + code + " (" + describe(code) + ")";
        }

        private static String describe(int code) {
            switch (code) {
                case 2300: return "unknown";
                case 2301: return "permission denied";
                case 2302: return "bad bundle id";
                case 2303: return "bundle exists";
                case 2304: return "bundle closed";
                case 2305: return "out of bundles";
                case 2306: return "bad type";
                case 2307: return "bad flags";
                case 2308: return "bad message length";
                case 2309: return "bad xid";
                case 2310: return "unsupported message";
                case 2311: return "conflicting message";
                case 2312: return "too many messages";
                case 2313: return "message failed";
                case 2314: return "timeout";
                case 2315: return "bundle in progress";
                default: return "code " + code;
            }
        }
    }
}
