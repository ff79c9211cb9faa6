package org.metron.drivers.agent;

import io.grpc.Status;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import org.metron.agent.v1.LoadStreamRequest;
import org.metron.agent.v1.Stats;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * One logical load-stream subscription of a {@link GrpcAgentClient}: resubscribes with backoff whenever the stream
 * ends while still wanted. When the client closes under it (its server's netcfg removed, or its endpoint changed:
 * the registry closes the client and makes another), its subscriber is told once with CANCELLED "client closed",
 * since no report will come any more: a subscriber not told kept the dead subscription, and a server declared again
 * was never monitored again (no load, no black-box NF status; the Karaf test_openflow black-box test after a chain
 * test found it).
 */
final class LoadSubscription implements AutoCloseable {
    private final GrpcAgentClient client;
    private final LoadStreamRequest request;
    private final Consumer<Stats> onReport;
    private final Consumer<Throwable> onError;
    private final AtomicInteger failures = new AtomicInteger();
    private final AtomicBoolean toldClosed = new AtomicBoolean();
    private volatile ClientCallStreamObserver<LoadStreamRequest> call;
    private volatile boolean cancelled;

    LoadSubscription(GrpcAgentClient client, LoadStreamRequest request, Consumer<Stats> onReport,
                     Consumer<Throwable> onError) {
        this.client = client;
        this.request = request;
        this.onReport = onReport;
        this.onError = onError;
    }

    void subscribe() {
        if (cancelled || client.isClosed()) {
            return;
        }
        client.stub().streamLoad(request, new ClientResponseObserver<LoadStreamRequest, Stats>() {
            @Override
            public void beforeStart(ClientCallStreamObserver<LoadStreamRequest> requestStream) {
                call = requestStream;
            }

            @Override
            public void onNext(Stats value) {
                failures.set(0);
                onReport.accept(value);
            }

            @Override
            public void onError(Throwable t) {
                ended(Status.fromThrowable(t));
            }

            @Override
            public void onCompleted() {
                ended(Status.UNAVAILABLE.withDescription("agent ended the load stream"));
            }
        });
    }

    private void ended(Status status) {
        if (cancelled) {
            return;
        }
        if (client.isClosed()) {
            clientClosed();
            return;
        }
        onError.accept(client.loadStreamError(status));
        if (!client.retryLater(this::subscribe, failures.getAndIncrement())) {
            clientClosed(); // the client closed meanwhile
        }
    }

    void clientClosed() {
        if (!cancelled && toldClosed.compareAndSet(false, true)) {
            onError.accept(client.closedError());
        }
    }

    @Override
    public void close() {
        cancelled = true;
        client.forget(this);
        ClientCallStreamObserver<LoadStreamRequest> c = call;
        if (c != null) {
            c.cancel("load subscription closed", null);
        }
    }
}
