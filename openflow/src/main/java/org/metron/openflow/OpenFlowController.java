package org.metron.openflow;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import org.projectfloodlight.openflow.protocol.OFFlowRemoved;
import org.projectfloodlight.openflow.protocol.OFPacketIn;
import org.projectfloodlight.openflow.protocol.OFPortStatus;
import org.projectfloodlight.openflow.types.DatapathId;

import java.net.InetSocketAddress;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Listens for OpenFlow switches (they connect to us: OVS {@code set-controller tcp:127.0.0.1:PORT}) and keeps
 * the set of connected switches by datapath id.
 */
public final class OpenFlowController implements AutoCloseable {
    /** Default time a switch has to answer any request. */
    public static final long DEFAULT_DEADLINE_MS = 10_000;

    private final EventLoopGroup boss = new NioEventLoopGroup(1);
    private final EventLoopGroup workers = new NioEventLoopGroup(2);
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "openflow-deadlines");
        t.setDaemon(true);
        return t;
    });
    private final Map<DatapathId, OfSwitch> switches = new ConcurrentHashMap<>();
    private final List<OfSwitchListener> listeners = new CopyOnWriteArrayList<>();
    private final Channel server;

    private OpenFlowController(InetSocketAddress address, long deadlineMs) throws InterruptedException {
        OfSwitchListener dispatcher = new Dispatcher();
        server = new ServerBootstrap().group(boss, workers).channel(NioServerSocketChannel.class)
                .option(ChannelOption.SO_REUSEADDR, true)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast(OfMessageCodec.framer(), new OfMessageCodec.Decoder(),
                                              new OfMessageCodec.Encoder(),
                                              new OfChannelHandler(dispatcher, timer, deadlineMs));
                    }
                }).bind(address).sync().channel();
    }

    /** Starts listening on {@code address} (port 0 picks a free port; see {@link #port()}). */
    public static OpenFlowController listen(InetSocketAddress address, long deadlineMs) {
        try {
            return new OpenFlowController(address, deadlineMs);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new OpenFlowException("interrupted while binding OpenFlow listener " + address);
        } catch (RuntimeException e) {
            throw new OpenFlowException("cannot listen for OpenFlow switches on " + address + ": " + e, e);
        }
    }

    public int port() {
        return ((InetSocketAddress) server.localAddress()).getPort();
    }

    public void addListener(OfSwitchListener listener) {
        listeners.add(listener);
    }

    public void removeListener(OfSwitchListener listener) {
        listeners.remove(listener);
    }

    public Collection<OfSwitch> switches() {
        return List.copyOf(switches.values());
    }

    public Optional<OfSwitch> get(DatapathId dpid) {
        return Optional.ofNullable(switches.get(dpid));
    }

    /** Waits until the switch is connected; fails naming it after {@code timeoutMs}. */
    public OfSwitch await(DatapathId dpid, long timeoutMs) {
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (System.nanoTime() < end) {
            OfSwitch sw = switches.get(dpid);
            if (sw != null && sw.isConnected()) {
                return sw;
            }
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        throw new OpenFlowException("switch " + dpid + " did not connect to port " + port() + " within "
                + timeoutMs + " ms");
    }

    @Override
    public void close() {
        server.close().syncUninterruptibly();
        workers.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        boss.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        timer.shutdownNow();
    }

    /** Keeps the switch table current, then fans events out to the listeners. */
    private final class Dispatcher implements OfSwitchListener {
        @Override
        public void switchConnected(OfSwitch sw) {
            switches.put(sw.dpid(), sw);
            listeners.forEach(l -> l.switchConnected(sw));
        }

        @Override
        public void switchDisconnected(OfSwitch sw) {
            if (switches.remove(sw.dpid(), sw)) {
                listeners.forEach(l -> l.switchDisconnected(sw));
            }
        }

        @Override
        public void portStatus(OfSwitch sw, OFPortStatus status) {
            listeners.forEach(l -> l.portStatus(sw, status));
        }

        @Override
        public void flowRemoved(OfSwitch sw, OFFlowRemoved removed) {
            listeners.forEach(l -> l.flowRemoved(sw, removed));
        }

        @Override
        public void packetIn(OfSwitch sw, OFPacketIn packetIn) {
            listeners.forEach(l -> l.packetIn(sw, packetIn));
        }
    }
}
