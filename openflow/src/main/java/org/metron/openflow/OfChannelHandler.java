package org.metron.openflow;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import org.projectfloodlight.openflow.protocol.OFEchoRequest;
import org.projectfloodlight.openflow.protocol.OFFactories;
import org.projectfloodlight.openflow.protocol.OFFactory;
import org.projectfloodlight.openflow.protocol.OFFeaturesReply;
import org.projectfloodlight.openflow.protocol.OFFlowRemoved;
import org.projectfloodlight.openflow.protocol.OFHello;
import org.projectfloodlight.openflow.protocol.OFPacketIn;
import org.projectfloodlight.openflow.protocol.OFPortDescStatsReply;
import org.projectfloodlight.openflow.protocol.OFPortReason;
import org.projectfloodlight.openflow.protocol.OFPortStatus;
import org.projectfloodlight.openflow.protocol.OFStatsReplyFlags;
import org.projectfloodlight.openflow.protocol.OFVersion;
import org.projectfloodlight.openflow.types.DatapathId;
import org.projectfloodlight.openflow.types.U32;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;

/**
 * One switch connection: the OpenFlow 1.3 handshake (HELLO with a version bitmap, FEATURES, PORT_DESC), then
 * echo answers, port status, flow-removed and packet-in events, and replies handed to the {@link OfSwitch}.
 */
final class OfChannelHandler extends SimpleChannelInboundHandler<Object> {
    private static final Logger log = LoggerFactory.getLogger(OfChannelHandler.class);
    private static final OFFactory OF13 = OFFactories.getFactory(OFVersion.OF_13);
    private static final int HELLO_XID = 1;
    private static final int FEATURES_XID = 2;
    private static final int PORT_DESC_XID = 3;

    private final OfSwitchListener listener;
    private final ScheduledExecutorService timer;
    private final long deadlineMs;
    private DatapathId dpid;
    private final List<org.projectfloodlight.openflow.protocol.OFPortDesc> ports = new ArrayList<>();
    private OfSwitch sw;

    OfChannelHandler(OfSwitchListener listener, ScheduledExecutorService timer, long deadlineMs) {
        this.listener = listener;
        this.timer = timer;
        this.deadlineMs = deadlineMs;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        // Version bitmap with only bit 4 (OpenFlow 1.3) set: the switch must speak 1.3.
        OFHello hello = OF13.buildHello().setXid(HELLO_XID)
                .setElements(List.of(OF13.helloElemVersionbitmap(List.of(U32.of(1 << 4))))).build();
        ctx.writeAndFlush(hello);
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof OFEchoRequest) {
            OFEchoRequest echo = (OFEchoRequest) msg;
            ctx.writeAndFlush(OF13.buildEchoReply().setXid(echo.getXid()).setData(echo.getData()).build());
        } else if (sw != null) {
            connected(msg);
        } else if (msg instanceof OFHello) {
            if (((OFHello) msg).getVersion().compareTo(OFVersion.OF_13) < 0) {
                log.warn("{}: switch offers only {}; Metron needs OpenFlow 1.3", ctx.channel().remoteAddress(),
                         ((OFHello) msg).getVersion());
                ctx.close();
                return;
            }
            ctx.writeAndFlush(OF13.buildFeaturesRequest().setXid(FEATURES_XID).build());
        } else if (msg instanceof OFFeaturesReply) {
            dpid = ((OFFeaturesReply) msg).getDatapathId();
            ctx.writeAndFlush(OF13.buildPortDescStatsRequest().setXid(PORT_DESC_XID).build());
        } else if (msg instanceof OFPortDescStatsReply && dpid != null) {
            OFPortDescStatsReply reply = (OFPortDescStatsReply) msg;
            ports.addAll(reply.getEntries());
            if (!reply.getFlags().contains(OFStatsReplyFlags.REPLY_MORE)) {
                sw = new OfSwitch(ctx.channel(), dpid, OF13, ports, timer, deadlineMs);
                listener.switchConnected(sw);
            }
        }
    }

    private void connected(Object msg) {
        if (msg instanceof OFPortStatus) {
            OFPortStatus status = (OFPortStatus) msg;
            if (status.getReason() == OFPortReason.DELETE) {
                sw.portDeleted(status.getDesc());
            } else {
                sw.portChanged(status.getDesc());
            }
            listener.portStatus(sw, status);
        } else if (msg instanceof OFFlowRemoved) {
            listener.flowRemoved(sw, (OFFlowRemoved) msg);
        } else if (msg instanceof OFPacketIn) {
            listener.packetIn(sw, (OFPacketIn) msg);
        } else {
            sw.received(msg);
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        if (sw != null) {
            sw.disconnected();
            listener.switchDisconnected(sw);
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        log.warn("{} ({}): closing channel: {}", sw != null ? sw : "handshake", ctx.channel().remoteAddress(),
                 cause.toString());
        ctx.close();
    }
}
