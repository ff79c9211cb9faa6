package org.metron.drivers.p4;

import io.grpc.Channel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import p4.v1.P4RuntimeGrpc;
import p4.v1.P4RuntimeOuterClass;
import p4.v1.P4RuntimeOuterClass.MasterArbitrationUpdate;
import p4.v1.P4RuntimeOuterClass.StreamMessageRequest;
import p4.v1.P4RuntimeOuterClass.StreamMessageResponse;
import p4.v1.P4RuntimeOuterClass.TableEntry;
import p4.v1.P4RuntimeOuterClass.Uint128;
import p4.v1.P4RuntimeOuterClass.Update;

import java.time.Duration;
import java.util.Collection;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A minimal P4Runtime primary client for the tagger table: becomes primary through the stream channel's
 * arbitration, then writes table entries. ONOS uses its own P4Runtime client; this one serves Metron hosts
 * that program a P4Runtime switch without ONOS.
 */
public final class P4RuntimeWriter implements AutoCloseable {

    private final P4RuntimeGrpc.P4RuntimeBlockingStub blocking;
    private final StreamObserver<StreamMessageRequest> stream;
    private final long deviceId;
    private final Uint128 electionId;
    private final Duration deadline;

    private P4RuntimeWriter(P4RuntimeGrpc.P4RuntimeBlockingStub blocking, StreamObserver<StreamMessageRequest> stream,
                            long deviceId, Uint128 electionId, Duration deadline) {
        this.blocking = blocking;
        this.stream = stream;
        this.deviceId = deviceId;
        this.electionId = electionId;
        this.deadline = deadline;
    }

    /**
     * Opens the stream channel and asks to be primary for {@code deviceId} with {@code electionId}.
     *
     * @throws IllegalStateException when the switch does not make this client primary within the deadline
     */
    public static P4RuntimeWriter becomePrimary(Channel channel, long deviceId, long electionId, Duration deadline) {
        Uint128 election = Uint128.newBuilder().setHigh(0).setLow(electionId).build();
        CompletableFuture<MasterArbitrationUpdate> answer = new CompletableFuture<>();
        StreamObserver<StreamMessageRequest> stream = P4RuntimeGrpc.newStub(channel).streamChannel(
                new StreamObserver<StreamMessageResponse>() {
                    @Override
                    public void onNext(StreamMessageResponse r) {
                        if (r.hasArbitration()) {
                            answer.complete(r.getArbitration());
                        }
                    }

                    @Override
                    public void onError(Throwable t) {
                        answer.completeExceptionally(t);
                    }

                    @Override
                    public void onCompleted() {
                        answer.completeExceptionally(new IllegalStateException("stream closed by the switch"));
                    }
                });
        stream.onNext(StreamMessageRequest.newBuilder().setArbitration(MasterArbitrationUpdate.newBuilder()
                .setDeviceId(deviceId).setElectionId(election)).build());
        String who = "P4Runtime device " + deviceId + " election id " + electionId;
        try {
            MasterArbitrationUpdate a = answer.get(deadline.toMillis(), TimeUnit.MILLISECONDS);
            if (a.getStatus().getCode() != Status.Code.OK.value()) {
                stream.onCompleted();
                throw new IllegalStateException(who + ": not primary (" + Status.fromCodeValue(a.getStatus().getCode())
                                                        .getCode() + " " + a.getStatus().getMessage() + ")");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            stream.onError(Status.CANCELLED.asException());
            throw new IllegalStateException(who + ": interrupted during arbitration", e);
        } catch (ExecutionException | TimeoutException e) {
            stream.onError(Status.CANCELLED.asException());
            Throwable cause = e instanceof ExecutionException ? e.getCause() : e;
            throw new IllegalStateException(who + ": arbitration failed: " + cause, cause);
        }
        return new P4RuntimeWriter(P4RuntimeGrpc.newBlockingStub(channel), stream, deviceId, election, deadline);
    }

    public void insert(Collection<TableEntry> entries) {
        write(Update.Type.INSERT, entries);
    }

    public void modify(Collection<TableEntry> entries) {
        write(Update.Type.MODIFY, entries);
    }

    public void delete(Collection<TableEntry> entries) {
        write(Update.Type.DELETE, entries);
    }

    /**
     * One Write RPC carrying all entries.
     *
     * @throws StatusRuntimeException the switch's error (its per-update details are in the status)
     */
    public void write(Update.Type type, Collection<TableEntry> entries) {
        if (entries.isEmpty()) {
            return;
        }
        P4RuntimeOuterClass.WriteRequest.Builder req = P4RuntimeOuterClass.WriteRequest.newBuilder()
                .setDeviceId(deviceId).setElectionId(electionId);
        for (TableEntry e : entries) {
            req.addUpdates(Update.newBuilder().setType(type)
                                   .setEntity(P4RuntimeOuterClass.Entity.newBuilder().setTableEntry(e)));
        }
        blocking.withDeadlineAfter(deadline.toMillis(), TimeUnit.MILLISECONDS).write(req.build());
    }

    @Override
    public void close() {
        stream.onCompleted();
    }
}
