package org.metron.drivers.agent;

import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContext;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContextBuilder;
import io.grpc.stub.StreamObserver;
import org.metron.agent.v1.DeployPipelineRequest;
import org.metron.agent.v1.ExportStateRequest;
import org.metron.agent.v1.GetResourcesRequest;
import org.metron.agent.v1.HealthReply;
import org.metron.agent.v1.HealthRequest;
import org.metron.agent.v1.ImportStateReply;
import org.metron.agent.v1.ImportStateRequest;
import org.metron.agent.v1.ListNicRulesRequest;
import org.metron.agent.v1.ListPipelinesReply;
import org.metron.agent.v1.ListPipelinesRequest;
import org.metron.agent.v1.LoadStreamRequest;
import org.metron.agent.v1.MetronAgentGrpc;
import org.metron.agent.v1.NicRuleBatch;
import org.metron.agent.v1.NicRuleIds;
import org.metron.agent.v1.NicRuleList;
import org.metron.agent.v1.NicRuleReply;
import org.metron.agent.v1.PipelineStatus;
import org.metron.agent.v1.RemovePipelineReply;
import org.metron.agent.v1.RemovePipelineRequest;
import org.metron.agent.v1.ServerResources;
import org.metron.agent.v1.StateSnapshot;
import org.metron.agent.v1.Stats;
import org.metron.agent.v1.StatsRequest;
import org.metron.agent.v1.UpdatePipelineRequest;

import javax.net.ssl.SSLException;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * {@link AgentClient} over one gRPC channel (grpc-netty-shaded).
 * <ul>
 *   <li>Every unary call carries the endpoint's deadline.</li>
 *   <li>The channel reconnects on its own; we shorten gRPC's 1..120 s reconnect backoff to {@link Backoff}
 *       so a restarted agent is found within seconds.</li>
 *   <li>Reads are retried on UNAVAILABLE with the same backoff until the deadline; writes never are (a lost
 *       reply could otherwise apply them twice): they fail with UNAVAILABLE and the caller rolls back.</li>
 *   <li>TLS when the endpoint names a CA; mutual TLS when it also names a client certificate.</li>
 * </ul>
 */
public final class GrpcAgentClient implements AgentClient {

    /** Keepalive pings so a silently dead agent breaks the load stream instead of leaving it hanging. */
    private static final long KEEPALIVE_MS = 10_000;
    /** What a call or a load subscription of a closed client ends with. */
    private static final Status CLIENT_CLOSED = Status.CANCELLED.withDescription("client closed");

    private final AgentEndpoint endpoint;
    private final Backoff backoff;
    private final ManagedChannel channel;
    private final MetronAgentGrpc.MetronAgentStub stub;
    private final ScheduledExecutorService timer;
    private final AtomicInteger reconnectAttempt = new AtomicInteger();
    private volatile boolean closed;
    /** The load subscriptions their subscribers have not closed: told when this client closes under them. */
    private final Set<LoadSubscription> subscriptions = ConcurrentHashMap.newKeySet();
    /** Told of every connectivity change of the channel (a killed agent resets the connection at once). */
    private volatile Consumer<Boolean> connectivityListener = ready -> { };

    private GrpcAgentClient(AgentEndpoint endpoint, Backoff backoff, ManagedChannel channel) {
        this.endpoint = endpoint;
        this.backoff = backoff;
        this.channel = channel;
        this.stub = MetronAgentGrpc.newStub(channel);
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "metron-agent-" + endpoint.target());
            t.setDaemon(true);
            return t;
        });
        watchConnectivity();
    }

    /**
     * Opens a channel to the agent. Connecting is lazy: an unreachable agent shows up as UNAVAILABLE on the
     * first call, not here.
     *
     * @throws IllegalArgumentException when the TLS files cannot be loaded (names the file)
     */
    public static GrpcAgentClient connect(AgentEndpoint endpoint) {
        return connect(endpoint, Backoff.DEFAULT);
    }

    public static GrpcAgentClient connect(AgentEndpoint endpoint, Backoff backoff) {
        Objects.requireNonNull(endpoint, "endpoint");
        NettyChannelBuilder b = NettyChannelBuilder.forAddress(endpoint.host(), endpoint.port())
                .keepAliveTime(KEEPALIVE_MS, TimeUnit.MILLISECONDS)
                .keepAliveWithoutCalls(false);
        if (endpoint.tls()) {
            b.sslContext(sslContext(endpoint));
        } else {
            b.usePlaintext();
        }
        return new GrpcAgentClient(endpoint, backoff, b.build());
    }

    private static SslContext sslContext(AgentEndpoint e) {
        try {
            SslContextBuilder ssl = GrpcSslContexts.forClient().trustManager(e.trustCerts().orElseThrow().toFile());
            if (e.certChain().isPresent()) {
                ssl.keyManager(e.certChain().get().toFile(), e.privateKey().orElseThrow().toFile());
            }
            return ssl.build();
        } catch (SSLException | IllegalArgumentException ex) {
            throw new IllegalArgumentException("agent " + e.target() + ": cannot load TLS material ("
                    + e.trustCerts().orElse(null) + ", " + e.certChain().orElse(null) + ", "
                    + e.privateKey().orElse(null) + "): " + ex.getMessage(), ex);
        }
    }

    public AgentEndpoint endpoint() {
        return endpoint;
    }

    @Override
    public String target() {
        return endpoint.target();
    }

    /** True when the channel is connected right now (no call is made). */
    public boolean isReady() {
        return !closed && channel.getState(false) == ConnectivityState.READY;
    }

    /** {@link #isReady()}: the channel's own state, READY while the agent's connection is up. */
    @Override
    public Optional<Boolean> connected() {
        return Optional.of(isReady());
    }

    // ---- Reconnection ------------------------------------------------------------------------------------

    private void watchConnectivity() {
        if (closed) {
            return;
        }
        ConnectivityState state = channel.getState(false);
        if (state == ConnectivityState.READY) {
            reconnectAttempt.set(0);
        } else if (state == ConnectivityState.TRANSIENT_FAILURE) {
            long delay = backoff.delayMs(reconnectAttempt.getAndIncrement());
            timer.schedule(channel::resetConnectBackoff, delay, TimeUnit.MILLISECONDS);
        }
        channel.notifyWhenStateChanged(state, this::watchConnectivity);
        try {
            connectivityListener.accept(state == ConnectivityState.READY);
        } catch (RuntimeException e) {
            // a listener's fault must not stop the reconnection above; it only loses this one notification
        }
    }

    /**
     * Sets what runs on every change of the channel's connectivity state, told whether the channel is connected
     * (on a gRPC thread: it must not block).
     * A dead agent's connection is reset by its kernel, so this fires within milliseconds of the agent's death,
     * long before a call's deadline or a keepalive would tell.
     */
    public void onConnectivityChange(Consumer<Boolean> listener) {
        connectivityListener = Objects.requireNonNull(listener, "listener");
    }

    /**
     * One Health call, never retried and failing fast, that answers whether the agent serves now: a dead agent's
     * refused connection fails it at once (where {@link #health()} retries until its deadline), a live agent has
     * the endpoint's whole deadline to answer (a busy agent is not taken for dead). When the channel is not
     * connected its reconnect backoff is cut short first, so a restarted agent is found by the next ping.
     */
    public CompletableFuture<Boolean> ping() {
        if (closed) {
            return CompletableFuture.completedFuture(false);
        }
        if (channel.getState(true) != ConnectivityState.READY) {
            channel.resetConnectBackoff();
        }
        CompletableFuture<Boolean> result = new CompletableFuture<>();
        stub.withDeadlineAfter(endpoint.deadline().toNanos(), TimeUnit.NANOSECONDS)
                .health(HealthRequest.getDefaultInstance(), new StreamObserver<HealthReply>() {
                    private boolean serving;

                    @Override
                    public void onNext(HealthReply value) {
                        serving = value.getServing();
                    }

                    @Override
                    public void onError(Throwable t) {
                        result.complete(false);
                    }

                    @Override
                    public void onCompleted() {
                        result.complete(serving);
                    }
                });
        return result;
    }

    // ---- Unary calls -------------------------------------------------------------------------------------

    @Override
    public CompletableFuture<ServerResources> getResources() {
        return read("GetResources", GetResourcesRequest.getDefaultInstance(),
                    (s, q, o) -> s.getResources(q, o));
    }

    @Override
    public CompletableFuture<HealthReply> health() {
        return read("Health", HealthRequest.getDefaultInstance(), (s, q, o) -> s.health(q, o));
    }

    @Override
    public CompletableFuture<PipelineStatus> deployPipeline(DeployPipelineRequest request) {
        return build("DeployPipeline", request, (s, q, o) -> s.deployPipeline(q, o));
    }

    @Override
    public CompletableFuture<PipelineStatus> updatePipeline(UpdatePipelineRequest request) {
        return build("UpdatePipeline", request, (s, q, o) -> s.updatePipeline(q, o));
    }

    @Override
    public CompletableFuture<Void> removePipeline(RemovePipelineRequest q) {
        Objects.requireNonNull(q, "request");
        CompletableFuture<RemovePipelineReply> reply =
                write("RemovePipeline", q, (s, r, o) -> s.removePipeline(r, o));
        return reply.thenApply(r -> null);
    }

    @Override
    public CompletableFuture<ListPipelinesReply> listPipelines() {
        return read("ListPipelines", ListPipelinesRequest.getDefaultInstance(), (s, q, o) -> s.listPipelines(q, o));
    }

    @Override
    public CompletableFuture<NicRuleReply> installNicRules(NicRuleBatch batch) {
        return write("InstallNicRules", batch, (s, q, o) -> s.installNicRules(q, o));
    }

    @Override
    public CompletableFuture<NicRuleReply> removeNicRules(NicRuleIds request) {
        return write("RemoveNicRules", Objects.requireNonNull(request, "request"), (s, r, o) -> s.removeNicRules(r, o));
    }

    @Override
    public CompletableFuture<NicRuleList> listNicRules(String nic) {
        ListNicRulesRequest q = ListNicRulesRequest.newBuilder().setNic(nic == null ? "" : nic).build();
        return read("ListNicRules", q, (s, r, o) -> s.listNicRules(r, o));
    }

    @Override
    public CompletableFuture<Stats> getStats(String pipelineId) {
        StatsRequest q = StatsRequest.newBuilder().setPipelineId(pipelineId == null ? "" : pipelineId).build();
        return read("GetStats", q, (s, r, o) -> s.getStats(r, o));
    }

    @Override
    public CompletableFuture<StateSnapshot> exportState(String pipelineId, String groupId) {
        ExportStateRequest q = ExportStateRequest.newBuilder()
                .setPipelineId(Objects.requireNonNull(pipelineId, "pipelineId"))
                .setGroupId(Objects.requireNonNull(groupId, "groupId")).build();
        return read("ExportState", q, (s, r, o) -> s.exportState(r, o));
    }

    @Override
    public CompletableFuture<ImportStateReply> importState(ImportStateRequest request) {
        return build("ImportState", request, (s, q, o) -> s.importState(q, o));
    }

    /** The async stub method of one RPC. */
    @FunctionalInterface
    private interface Rpc<Q, R> {
        void call(MetronAgentGrpc.MetronAgentStub stub, Q request, StreamObserver<R> observer);
    }

    /** Idempotent: retried on UNAVAILABLE until the deadline. */
    private <Q, R> CompletableFuture<R> read(String name, Q request, Rpc<Q, R> rpc) {
        return call(name, request, rpc, true, endpoint.deadline());
    }

    /** Mutating: sent at most once. */
    private <Q, R> CompletableFuture<R> write(String name, Q request, Rpc<Q, R> rpc) {
        return call(name, Objects.requireNonNull(request, name + " request"), rpc, false, endpoint.deadline());
    }

    /** Mutating and building a pipeline (or filling its tables): sent at most once, with the build deadline. */
    private <Q, R> CompletableFuture<R> build(String name, Q request, Rpc<Q, R> rpc) {
        return call(name, Objects.requireNonNull(request, name + " request"), rpc, false, endpoint.buildDeadline());
    }

    @Override
    public Duration buildDeadline() {
        return endpoint.buildDeadline();
    }

    private <Q, R> CompletableFuture<R> call(String name, Q request, Rpc<Q, R> rpc, boolean retry,
                                             Duration deadline) {
        CompletableFuture<R> result = new CompletableFuture<>();
        long deadlineNanos = System.nanoTime() + deadline.toNanos();
        attempt(name, request, rpc, retry, deadlineNanos, 0, null, result);
        return result;
    }

    /**
     * One try of a call. {@code unavailable} is the previous try's UNAVAILABLE status: when the retries then run
     * out of time, that (the agent is unreachable) is the error to report, not the last try's cut-short deadline.
     */
    private <Q, R> void attempt(String name, Q request, Rpc<Q, R> rpc, boolean retry, long deadlineNanos,
                                int attempt, Status unavailable, CompletableFuture<R> result) {
        if (closed) {
            result.completeExceptionally(error(name, CLIENT_CLOSED));
            return;
        }
        long left = deadlineNanos - System.nanoTime();
        if (left <= 0) {
            result.completeExceptionally(error(name, unavailable != null ? unavailable
                    : Status.DEADLINE_EXCEEDED.withDescription("no reply within " + endpoint.deadline().toMillis()
                                                                       + " ms")));
            return;
        }
        rpc.call(stub.withDeadlineAfter(left, TimeUnit.NANOSECONDS), request, new StreamObserver<R>() {
            private R reply;

            @Override
            public void onNext(R value) {
                reply = value;
            }

            @Override
            public void onError(Throwable t) {
                Status status = Status.fromThrowable(t);
                long delayNanos = TimeUnit.MILLISECONDS.toNanos(backoff.delayMs(attempt));
                if (retry && status.getCode() == Status.Code.UNAVAILABLE && !closed
                        && System.nanoTime() + delayNanos < deadlineNanos) {
                    timer.schedule(() -> attempt(name, request, rpc, true, deadlineNanos, attempt + 1, status, result),
                                   delayNanos, TimeUnit.NANOSECONDS);
                } else if (status.getCode() == Status.Code.DEADLINE_EXCEEDED && unavailable != null) {
                    result.completeExceptionally(error(name, unavailable));
                } else {
                    result.completeExceptionally(error(name, status));
                }
            }

            @Override
            public void onCompleted() {
                result.complete(reply);
            }
        });
    }

    private AgentException error(String rpc, Status status) {
        return new AgentException(target(), rpc, AgentException.Code.valueOf(status.getCode().name()),
                                  describe(status), status.asException());
    }

    /**
     * The status's description plus why the transport failed, which gRPC keeps only as the status's cause ("io
     * exception" alone does not tell an operator that the agent refused this controller's certificate).
     */
    static String describe(Status status) {
        String d = status.getDescription();
        Throwable root = null;
        for (Throwable t = status.getCause(); t != null && t != root; t = t.getCause()) {
            if (t instanceof javax.net.ssl.SSLException) {
                // the engine's own message is generic ("General OpenSslEngine problem"); its innermost cause says
                // what failed (e.g. no certification path to a trusted CA)
                Throwable why = t;
                while (why.getCause() != null && why.getCause() != why) {
                    why = why.getCause();
                }
                return (d == null ? "" : d + ": ") + "TLS handshake failed: " + t.getMessage()
                        + (why == t ? "" : " (" + why.getMessage() + ")");
            }
            root = t;
        }
        if (root == null) {
            return d;
        }
        return (d == null ? "" : d + ": ") + root.getClass().getSimpleName()
                + (root.getMessage() == null ? "" : ": " + root.getMessage());
    }

    // ---- Load stream -------------------------------------------------------------------------------------

    @Override
    public AutoCloseable streamLoad(int intervalMs, double alertLoad, Consumer<Stats> onReport,
                                    Consumer<Throwable> onError) {
        if (intervalMs < 0) {
            throw new IllegalArgumentException("agent " + target() + ": StreamLoad interval " + intervalMs
                                                       + " ms is negative");
        }
        if (!(alertLoad >= 0 && alertLoad <= 1)) {
            throw new IllegalArgumentException("agent " + target() + ": StreamLoad alert load " + alertLoad
                                                       + " is outside 0..1");
        }
        if (closed) {
            throw error("StreamLoad", CLIENT_CLOSED);
        }
        LoadSubscription sub = new LoadSubscription(this,
                LoadStreamRequest.newBuilder().setIntervalMs(intervalMs).setAlertLoad(alertLoad).build(),
                Objects.requireNonNull(onReport, "onReport"), Objects.requireNonNull(onError, "onError"));
        subscriptions.add(sub);
        sub.subscribe();
        return sub;
    }

    // what a LoadSubscription of this client uses
    MetronAgentGrpc.MetronAgentStub stub() {
        return stub;
    }

    boolean isClosed() {
        return closed;
    }

    /** Runs {@code what} after the backoff for {@code failures} failures; false if this client closed meanwhile. */
    boolean retryLater(Runnable what, int failures) {
        try {
            timer.schedule(what, backoff.delayMs(failures), TimeUnit.MILLISECONDS);
            return true;
        } catch (RejectedExecutionException e) {
            return false;
        }
    }

    AgentException loadStreamError(Status status) {
        return error("StreamLoad", status);
    }

    AgentException closedError() {
        return error("StreamLoad", CLIENT_CLOSED);
    }

    void forget(LoadSubscription sub) {
        subscriptions.remove(sub);
    }

    // ---- Lifecycle ---------------------------------------------------------------------------------------

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        channel.shutdownNow();
        timer.shutdownNow();
        try {
            channel.awaitTermination(1, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        subscriptions.forEach(LoadSubscription::clientClosed); // those waiting for a resubscription too
    }

    @Override
    public String toString() {
        return "GrpcAgentClient{" + endpoint + "}";
    }
}
