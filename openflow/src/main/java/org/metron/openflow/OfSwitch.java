package org.metron.openflow;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import org.projectfloodlight.openflow.protocol.OFBarrierReply;
import org.projectfloodlight.openflow.protocol.OFControllerRole;
import org.projectfloodlight.openflow.protocol.OFErrorMsg;
import org.projectfloodlight.openflow.protocol.OFFactory;
import org.projectfloodlight.openflow.protocol.OFFlowMod;
import org.projectfloodlight.openflow.protocol.OFFlowStatsEntry;
import org.projectfloodlight.openflow.protocol.OFFlowStatsReply;
import org.projectfloodlight.openflow.protocol.OFGroupDescStatsEntry;
import org.projectfloodlight.openflow.protocol.OFGroupDescStatsReply;
import org.projectfloodlight.openflow.protocol.OFMessage;
import org.projectfloodlight.openflow.protocol.OFPortDesc;
import org.projectfloodlight.openflow.protocol.OFPortStatsEntry;
import org.projectfloodlight.openflow.protocol.OFPortStatsReply;
import org.projectfloodlight.openflow.protocol.OFRoleReply;
import org.projectfloodlight.openflow.protocol.OFStatsReply;
import org.projectfloodlight.openflow.protocol.OFStatsReplyFlags;
import org.projectfloodlight.openflow.protocol.OFStatsRequest;
import org.projectfloodlight.openflow.protocol.OFTableStatsReply;
import org.projectfloodlight.openflow.types.DatapathId;
import org.projectfloodlight.openflow.types.OFBufferId;
import org.projectfloodlight.openflow.types.OFGroup;
import org.projectfloodlight.openflow.types.OFPort;
import org.projectfloodlight.openflow.types.TableId;
import org.projectfloodlight.openflow.types.U64;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

/**
 * One connected OpenFlow 1.3 switch, after the handshake. Requests are matched to replies by xid; every
 * request future completes within {@link #deadlineMs} or fails naming the switch and the request.
 * Thread-safe: any thread may send; replies are dispatched on the channel's event loop.
 */
public final class OfSwitch {
    private final Channel channel;
    private final DatapathId dpid;
    private final OFFactory factory;
    private final ScheduledExecutorService timer;
    private final long deadlineMs;
    /** Bytes one bundled flow mod usually takes (sizes the batch buffer; it grows when needed). */
    private static final int ADD_BYTES_HINT = 160;
    private final AtomicInteger xids = new AtomicInteger(0x1000);
    private final AtomicInteger bundleIds = new AtomicInteger(1);
    private final Map<Integer, Pending> pending = new ConcurrentHashMap<>();
    private final Map<Integer, String> errors = new ConcurrentHashMap<>();
    private final Map<Integer, OFPortDesc> ports = new ConcurrentHashMap<>();

    /** A request awaiting its reply (multipart replies accumulate until the MORE flag clears). */
    private static final class Pending {
        final CompletableFuture<List<Object>> future = new CompletableFuture<>();
        final List<Object> parts = new ArrayList<>();
        final String what;

        Pending(String what) {
            this.what = what;
        }
    }

    OfSwitch(Channel channel, DatapathId dpid, OFFactory factory, Collection<OFPortDesc> ports,
             ScheduledExecutorService timer, long deadlineMs) {
        this.channel = channel;
        this.dpid = dpid;
        this.factory = factory;
        this.timer = timer;
        this.deadlineMs = deadlineMs;
        ports.forEach(p -> this.ports.put(p.getPortNo().getPortNumber(), p));
    }

    public DatapathId dpid() {
        return dpid;
    }

    /** The ONOS device id string of this switch, "of:" + 16 hex digits. */
    public String deviceId() {
        return "of:" + dpid.toString().replace(":", "");
    }

    public OFFactory factory() {
        return factory;
    }

    /** The switch's end of its channel (which connection this is, when a switch connects to several). */
    public java.net.SocketAddress remoteAddress() {
        return channel.remoteAddress();
    }

    public boolean isConnected() {
        return channel.isActive();
    }

    /** Current port descriptions (kept up to date by PORT_STATUS messages), by port number. */
    public Map<Integer, OFPortDesc> ports() {
        return Map.copyOf(ports);
    }

    int nextXid() {
        return xids.incrementAndGet();
    }

    // ---- requests ---------------------------------------------------------------------------------------

    /**
     * Sends flow mods (or group mods) then a barrier; fails naming the first rejected one when the switch refuses
     * any.
     */
    public CompletableFuture<Void> send(List<? extends OFMessage> mods) {
        return sendReportingErrors(mods).thenApply(rejected -> {
            rejected.entrySet().stream().findFirst().ifPresent(e -> {
                throw new OpenFlowException(deviceId() + " rejected flow mod #" + e.getKey() + " ("
                        + mods.get(e.getKey()) + "): " + e.getValue());
            });
            return null;
        });
    }

    /**
     * Sends flow mods then a barrier; completes, once the barrier is answered, with the switch's error for each
     * flow mod it rejected, by index in {@code mods} (empty when it took them all). For a caller that reports
     * failures per rule, as ONOS's flow rule provider does.
     */
    public CompletableFuture<SortedMap<Integer, String>> sendReportingErrors(List<? extends OFMessage> mods) {
        int first = xids.getAndAdd(mods.size()) + 1;
        ByteBuf batch = channel.alloc().buffer(Math.max(1, mods.size()) * ADD_BYTES_HINT);
        try {
            for (int i = 0; i < mods.size(); i++) {
                int start = batch.writerIndex();
                mods.get(i).writeTo(batch);
                batch.setInt(start + 4, first + i);
            }
        } catch (RuntimeException e) {
            batch.release();
            return CompletableFuture.failedFuture(e);
        }
        channel.write(batch);
        return barrier().thenApply(v -> takeErrors(first, mods.size()));
    }

    /**
     * Asks the switch to take {@code role} for this connection (OpenFlow 1.3 ROLE_REQUEST; {@code generationId}
     * orders MASTER/SLAVE requests across controllers); completes with the role the switch replied with.
     */
    public CompletableFuture<OFControllerRole> requestRole(OFControllerRole role, long generationId) {
        return request(nextXid(), "role request " + role, xid -> factory.buildRoleRequest().setXid(xid).setRole(role)
                .setGenerationId(U64.of(generationId)).build())
                .thenApply(parts -> ((OFRoleReply) parts.get(0)).getRole());
    }

    /**
     * Installs flow mods atomically through an ONF bundle: {@link #stageAtomically} then commit. Completes when
     * the commit is acknowledged.
     */
    public CompletableFuture<Void> sendAtomically(List<OFFlowMod> mods) {
        return stageAtomically(mods).thenCompose(Bundle::commit);
    }

    /**
     * Stages flow mods in an ONF bundle without applying them: open, add each, then a barrier so every add has
     * been validated; any add error discards the bundle (an OVS bundle with a rejected add would otherwise
     * commit the rest) and fails the future naming the flow mod. Completes with the open, validated bundle.
     */
    public CompletableFuture<Bundle> stageAtomically(List<OFFlowMod> mods) {
        int bundle = bundleIds.getAndIncrement();
        int flags = OnfBundle.FLAGS_ATOMIC_ORDERED;
        CompletableFuture<List<Object>> opened = request(nextXid(), "bundle open",
                xid -> OnfBundle.control(channel.alloc(), xid, bundle, OnfBundle.OPEN_REQUEST, flags));
        // All adds encoded by the caller into one buffer and written once: one write per flow mod from outside
        // the event loop costs a task hand-off each, more than the encoding itself.
        int first = xids.getAndAdd(mods.size()) + 1;
        ByteBuf adds = channel.alloc().buffer(mods.size() * ADD_BYTES_HINT);
        try {
            for (int i = 0; i < mods.size(); i++) {
                OnfBundle.writeAdd(adds, first + i, bundle, flags, mods.get(i));
            }
        } catch (RuntimeException e) {
            adds.release();
            control(bundle, OnfBundle.DISCARD_REQUEST, "bundle discard");
            return CompletableFuture.failedFuture(e);
        }
        channel.write(adds);
        // Pipelined: open, adds and the barrier go out together; one round trip validates them all.
        CompletableFuture<Void> validated = barrier();
        return opened.thenCompose(open -> validated).thenCompose(v -> {
            try {
                failOnErrors(first, mods, "bundled flow mod");
            } catch (OpenFlowException e) {
                return control(bundle, OnfBundle.DISCARD_REQUEST, "bundle discard").handle((r, t) -> {
                    throw e;
                });
            }
            return CompletableFuture.completedFuture(new Bundle(bundle));
        });
    }

    /** An open ONF bundle whose flow mods the switch has validated but not applied. */
    public final class Bundle {
        private final int id;

        private Bundle(int id) {
            this.id = id;
        }

        /** Applies every staged flow mod at once. */
        public CompletableFuture<Void> commit() {
            return control(id, OnfBundle.COMMIT_REQUEST, "bundle commit").thenApply(r -> null);
        }

        /** Drops the staged flow mods; none was ever applied. */
        public CompletableFuture<Void> discard() {
            return control(id, OnfBundle.DISCARD_REQUEST, "bundle discard").thenApply(r -> null);
        }
    }

    private CompletableFuture<List<Object>> control(int bundle, int type, String what) {
        return request(nextXid(), what, xid -> OnfBundle.control(channel.alloc(), xid, bundle, type,
                                                                 OnfBundle.FLAGS_ATOMIC_ORDERED));
    }

    public CompletableFuture<Void> barrier() {
        return request(nextXid(), "barrier", xid -> factory.buildBarrierRequest().setXid(xid).build())
                .thenApply(r -> null);
    }

    /**
     * Sends {@code frame} out of {@code port} (OpenFlow 1.3 PACKET_OUT, the whole frame in the message, no buffer,
     * in_port CONTROLLER: what ONOS's OpenFlowPacketProvider sends for an outbound packet such as an LLDP probe).
     * Fire and forget, as PACKET_OUT has no reply; a switch that cannot send it answers an error, logged nowhere.
     */
    public void packetOut(OFPort port, byte[] frame) {
        channel.writeAndFlush(factory.buildPacketOut().setXid(nextXid()).setBufferId(OFBufferId.NO_BUFFER)
                .setInPort(OFPort.CONTROLLER).setActions(List.of(factory.actions().output(port, 0xffff)))
                .setData(frame).build());
    }

    /** Every flow entry of every table. */
    public CompletableFuture<List<OFFlowStatsEntry>> flowStats() {
        return flowStats(0, 0);
    }

    /**
     * The entries whose cookie matches {@code cookie} in the bits of {@code cookieMask} (OpenFlow's cookie filter:
     * the switch sends only those), with their counters.
     */
    public CompletableFuture<List<OFFlowStatsEntry>> flowStats(long cookie, long cookieMask) {
        return multipart("flow stats", xid -> factory.buildFlowStatsRequest().setXid(xid).setTableId(TableId.ALL)
                .setOutPort(OFPort.ANY).setOutGroup(OFGroup.ANY).setCookie(U64.of(cookie))
                .setCookieMask(U64.of(cookieMask)).setMatch(factory.buildMatch().build()).build())
                .thenApply(replies -> replies.stream().flatMap(r -> ((OFFlowStatsReply) r).getEntries().stream())
                        .collect(Collectors.toList()));
    }

    /** Entries in all flow tables, from the tables' own counters (no dump of the entries themselves). */
    public CompletableFuture<Long> activeFlows() {
        return multipart("table stats", xid -> factory.buildTableStatsRequest().setXid(xid).build())
                .thenApply(replies -> replies.stream().flatMap(r -> ((OFTableStatsReply) r).getEntries().stream())
                        .mapToLong(e -> e.getActiveCount()).sum());
    }

    /**
     * Every group of the switch with its type and buckets (OpenFlow 1.3 GROUP_DESC multipart): what a restarted
     * controller reads back to know the groups an earlier run left.
     */
    public CompletableFuture<List<OFGroupDescStatsEntry>> groupDescs() {
        return multipart("group desc", xid -> factory.buildGroupDescStatsRequest().setXid(xid).build())
                .thenApply(replies -> replies.stream().flatMap(r -> ((OFGroupDescStatsReply) r).getEntries().stream())
                        .collect(Collectors.toList()));
    }

    /** Counters of every port (one request for all ports). */
    public CompletableFuture<List<OFPortStatsEntry>> portStats() {
        return multipart("port stats", xid -> factory.buildPortStatsRequest().setXid(xid).setPortNo(OFPort.ANY)
                .build())
                .thenApply(replies -> replies.stream().flatMap(r -> ((OFPortStatsReply) r).getEntries().stream())
                        .collect(Collectors.toList()));
    }

    private CompletableFuture<List<OFStatsReply>> multipart(String what,
                                                            java.util.function.IntFunction<OFStatsRequest<?>> req) {
        return request(nextXid(), what, req::apply).thenApply(parts -> parts.stream()
                .map(p -> (OFStatsReply) p).collect(Collectors.toList()));
    }

    private CompletableFuture<List<Object>> request(int xid, String what,
                                                    java.util.function.IntFunction<Object> message) {
        Pending p = new Pending(what);
        pending.put(xid, p);
        channel.writeAndFlush(message.apply(xid)).addListener(f -> {
            if (!f.isSuccess()) {
                fail(xid, new OpenFlowException(deviceId() + ": cannot send " + what + ": " + f.cause()));
            }
        });
        timer.schedule(() -> fail(xid, new OpenFlowException(deviceId() + ": no reply to " + what + " within "
                + deadlineMs + " ms", new TimeoutException())), deadlineMs, TimeUnit.MILLISECONDS);
        return p.future;
    }

    /** Flow mod {@code i} of a batch was sent with xid {@code first + i}. */
    private void failOnErrors(int first, List<OFFlowMod> mods, String what) {
        SortedMap<Integer, String> rejected = takeErrors(first, mods.size());
        if (!rejected.isEmpty()) {
            int i = rejected.firstKey();
            throw new OpenFlowException(deviceId() + " rejected " + what + " #" + i + " (" + mods.get(i) + "): "
                    + rejected.get(i));
        }
    }

    /** The errors the switch answered flow mods {@code first .. first + count - 1} with, by index; forgotten after. */
    private SortedMap<Integer, String> takeErrors(int first, int count) {
        SortedMap<Integer, String> rejected = new TreeMap<>();
        if (errors.isEmpty()) {
            return rejected;
        }
        for (int i = 0; i < count; i++) {
            String error = errors.remove(first + i);
            if (error != null) {
                rejected.put(i, error);
            }
        }
        return rejected;
    }

    private void fail(int xid, Throwable t) {
        Pending p = pending.remove(xid);
        if (p != null) {
            p.future.completeExceptionally(t);
        }
    }

    // ---- replies (channel event loop) --------------------------------------------------------------------

    void received(Object msg) {
        if (msg instanceof OnfBundle.ControlReply) {
            complete(((OnfBundle.ControlReply) msg).xid, msg, false);
        } else if (msg instanceof OnfBundle.Error) {
            OnfBundle.Error e = (OnfBundle.Error) msg;
            Pending p = pending.remove(e.xid);
            if (p != null) {
                p.future.completeExceptionally(new OpenFlowException(deviceId() + ": " + p.what + ": " + e));
            } else {
                errors.put(e.xid, e.toString());
            }
        } else if (msg instanceof OFErrorMsg) {
            OFErrorMsg e = (OFErrorMsg) msg;
            Pending p = pending.remove((int) e.getXid());
            if (p != null) {
                p.future.completeExceptionally(new OpenFlowException(deviceId() + ": " + p.what + ": " + e));
            } else {
                errors.put((int) e.getXid(), e.toString());
            }
        } else if (msg instanceof OFStatsReply) {
            OFStatsReply r = (OFStatsReply) msg;
            complete((int) r.getXid(), r, r.getFlags().contains(OFStatsReplyFlags.REPLY_MORE));
        } else if (msg instanceof OFBarrierReply || msg instanceof OFRoleReply) {
            complete((int) ((OFMessage) msg).getXid(), msg, false);
        }
    }

    void portChanged(OFPortDesc desc) {
        ports.put(desc.getPortNo().getPortNumber(), desc);
    }

    void portDeleted(OFPortDesc desc) {
        ports.remove(desc.getPortNo().getPortNumber());
    }

    void disconnected() {
        OpenFlowException e = new OpenFlowException(deviceId() + " disconnected");
        pending.keySet().forEach(xid -> fail(xid, e));
    }

    private void complete(int xid, Object part, boolean more) {
        Pending p = more ? pending.get(xid) : pending.remove(xid);
        if (p == null) {
            return;
        }
        p.parts.add(part);
        if (!more) {
            p.future.complete(p.parts);
        }
    }

    @Override
    public String toString() {
        return deviceId();
    }
}
