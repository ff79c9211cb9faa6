package org.metron.openflow;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.netty.handler.codec.MessageToByteEncoder;
import io.netty.handler.codec.MessageToMessageDecoder;
import org.projectfloodlight.openflow.protocol.OFFactories;
import org.projectfloodlight.openflow.protocol.OFMessage;

import java.util.List;

/** OpenFlow framing and (de)serialization for a switch channel. */
final class OfMessageCodec {
    private static final int OFPT_ERROR = 1;
    private static final int OFPT_EXPERIMENTER = 4;
    private static final int OFPET_EXPERIMENTER = 0xffff;

    private OfMessageCodec() {
    }

    /** Splits the byte stream into whole OpenFlow messages (length: 2 bytes at offset 2, header included). */
    static LengthFieldBasedFrameDecoder framer() {
        return new LengthFieldBasedFrameDecoder(0xffff, 2, 2, -4, 0);
    }

    /**
     * One frame to one message (or none). ONF bundle replies and ONF experimenter errors are recognised here,
     * before openflowj's reader, which cannot parse them; other ONF experimenter messages are dropped.
     */
    static final class Decoder extends MessageToMessageDecoder<ByteBuf> {
        @Override
        protected void decode(ChannelHandlerContext ctx, ByteBuf frame, List<Object> out) throws Exception {
            int base = frame.readerIndex();
            int type = frame.getUnsignedByte(base + 1);
            int xid = frame.getInt(base + 4);
            if (type == OFPT_EXPERIMENTER && frame.readableBytes() >= 24
                    && frame.getInt(base + 8) == OnfBundle.ONF_EXPERIMENTER
                    && frame.getInt(base + 12) == OnfBundle.CONTROL) {
                out.add(new OnfBundle.ControlReply(xid, frame.getInt(base + 16), frame.getUnsignedShort(base + 20)));
                return;
            }
            if (type == OFPT_EXPERIMENTER && frame.readableBytes() >= 16
                    && frame.getInt(base + 8) == OnfBundle.ONF_EXPERIMENTER) {
                // another ONF message: Open vSwitch sends ONFT_ROLE_STATUS (1911) to an OpenFlow 1.3 connection
                // that another controller's MASTER request demoted to SLAVE (a cluster's new master); openflowj
                // cannot read it and would close the channel. Nothing here needs it: the controller's own
                // mastership tells the node its new role.
                return;
            }
            if (type == OFPT_ERROR && frame.readableBytes() >= 16
                    && frame.getUnsignedShort(base + 8) == OFPET_EXPERIMENTER
                    && frame.getInt(base + 12) == OnfBundle.ONF_EXPERIMENTER) {
                out.add(new OnfBundle.Error(xid, frame.getUnsignedShort(base + 10)));
                return;
            }
            out.add(OFFactories.getGenericReader().readFrom(frame));
        }
    }

    /** openflowj messages to bytes; hand-encoded ByteBufs (ONF bundles) pass through untouched. */
    static final class Encoder extends MessageToByteEncoder<OFMessage> {
        @Override
        protected void encode(ChannelHandlerContext ctx, OFMessage msg, ByteBuf out) {
            msg.writeTo(out);
        }
    }
}
