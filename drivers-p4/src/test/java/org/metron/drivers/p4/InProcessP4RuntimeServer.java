package org.metron.drivers.p4;

import com.google.rpc.Code;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.StreamObserver;
import p4.config.v1.P4InfoOuterClass;
import p4.v1.P4RuntimeGrpc;
import p4.v1.P4RuntimeOuterClass;
import p4.v1.P4RuntimeOuterClass.FieldMatch;
import p4.v1.P4RuntimeOuterClass.MasterArbitrationUpdate;
import p4.v1.P4RuntimeOuterClass.StreamMessageRequest;
import p4.v1.P4RuntimeOuterClass.StreamMessageResponse;
import p4.v1.P4RuntimeOuterClass.TableEntry;
import p4.v1.P4RuntimeOuterClass.Uint128;
import p4.v1.P4RuntimeOuterClass.Update;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.stream.Collectors;

/**
 * The switch side of P4Runtime over real in-process gRPC, since no P4 target installs here: arbitration
 * (highest election id is primary), and Write checked against the P4Info as a target would (ids, match kinds,
 * action refs, canonical byte widths, priority for ternary/range tables, duplicate inserts). Keeps the table.
 */
final class InProcessP4RuntimeServer implements AutoCloseable {

    private final String name = "p4rt-" + UUID.randomUUID();
    private final long deviceId;
    private final P4InfoOuterClass.P4Info p4info;
    private final Server server;
    /** Received Write requests, in order. */
    final List<P4RuntimeOuterClass.WriteRequest> writes = Collections.synchronizedList(new ArrayList<>());
    /** Installed entries keyed by table id + match + priority, as the spec identifies them. */
    final Map<String, TableEntry> table = Collections.synchronizedMap(new LinkedHashMap<>());
    private volatile Uint128 primary;

    InProcessP4RuntimeServer(long deviceId, P4InfoOuterClass.P4Info p4info) throws IOException {
        this.deviceId = deviceId;
        this.p4info = p4info;
        this.server = InProcessServerBuilder.forName(name).directExecutor().addService(new Service()).build().start();
    }

    ManagedChannel channel() {
        return InProcessChannelBuilder.forName(name).directExecutor().build();
    }

    @Override
    public void close() {
        server.shutdownNow();
    }

    private static int compare(Uint128 a, Uint128 b) {
        int c = Long.compareUnsigned(a.getHigh(), b.getHigh());
        return c != 0 ? c : Long.compareUnsigned(a.getLow(), b.getLow());
    }

    private final class Service extends P4RuntimeGrpc.P4RuntimeImplBase {

        @Override
        public StreamObserver<StreamMessageRequest> streamChannel(StreamObserver<StreamMessageResponse> out) {
            return new StreamObserver<>() {
                @Override
                public void onNext(StreamMessageRequest r) {
                    if (!r.hasArbitration()) {
                        return;
                    }
                    MasterArbitrationUpdate a = r.getArbitration();
                    if (a.getDeviceId() != deviceId) {
                        out.onError(Status.NOT_FOUND.withDescription("no device " + a.getDeviceId()).asException());
                        return;
                    }
                    synchronized (InProcessP4RuntimeServer.this) {
                        if (primary == null || compare(a.getElectionId(), primary) >= 0) {
                            primary = a.getElectionId();
                        }
                    }
                    int code = primary.equals(a.getElectionId()) ? Code.OK_VALUE : Code.ALREADY_EXISTS_VALUE;
                    out.onNext(StreamMessageResponse.newBuilder().setArbitration(a.toBuilder()
                            .setElectionId(primary).setStatus(com.google.rpc.Status.newBuilder().setCode(code)))
                                       .build());
                }

                @Override
                public void onError(Throwable t) {
                }

                @Override
                public void onCompleted() {
                    out.onCompleted();
                }
            };
        }

        @Override
        public void write(P4RuntimeOuterClass.WriteRequest req, StreamObserver<P4RuntimeOuterClass.WriteResponse> out) {
            if (req.getDeviceId() != deviceId) {
                out.onError(Status.NOT_FOUND.withDescription("no device " + req.getDeviceId()).asException());
                return;
            }
            if (primary == null || !primary.equals(req.getElectionId())) {
                out.onError(Status.PERMISSION_DENIED.withDescription("not primary").asException());
                return;
            }
            writes.add(req);
            Map<String, TableEntry> staged = new LinkedHashMap<>(table);
            for (Update u : req.getUpdatesList()) {
                String err = check(u.getEntity().getTableEntry());
                if (err == null) {
                    err = apply(staged, u);
                }
                if (err != null) {
                    out.onError(Status.INVALID_ARGUMENT.withDescription(err).asException());
                    return;
                }
            }
            table.clear();
            table.putAll(staged);
            out.onNext(P4RuntimeOuterClass.WriteResponse.getDefaultInstance());
            out.onCompleted();
        }
    }

    private static String key(TableEntry e) {
        return e.getTableId() + "|" + e.getMatchList() + "|" + e.getPriority();
    }

    private static String apply(Map<String, TableEntry> t, Update u) {
        TableEntry e = u.getEntity().getTableEntry();
        switch (u.getType()) {
            case INSERT:
                return t.putIfAbsent(key(e), e) == null ? null : "ALREADY_EXISTS " + key(e);
            case MODIFY:
                return t.replace(key(e), e) != null ? null : "NOT_FOUND " + key(e);
            case DELETE:
                return t.remove(key(e)) != null ? null : "NOT_FOUND " + key(e);
            default:
                return "unknown update type";
        }
    }

    /** What a P4Runtime target verifies of an entry, against the P4Info. */
    private String check(TableEntry e) {
        P4InfoOuterClass.Table t = p4info.getTablesList().stream()
                .filter(x -> x.getPreamble().getId() == e.getTableId()).findFirst().orElse(null);
        if (t == null) {
            return "unknown table id " + e.getTableId();
        }
        boolean needsPriority = false;
        for (P4InfoOuterClass.MatchField f : t.getMatchFieldsList()) {
            needsPriority |= f.getMatchType() == P4InfoOuterClass.MatchField.MatchType.TERNARY
                    || f.getMatchType() == P4InfoOuterClass.MatchField.MatchType.RANGE;
        }
        if (needsPriority != (e.getPriority() > 0)) {
            return "priority " + e.getPriority() + " on table " + t.getPreamble().getName();
        }
        for (FieldMatch m : e.getMatchList()) {
            P4InfoOuterClass.MatchField f = t.getMatchFieldsList().stream()
                    .filter(x -> x.getId() == m.getFieldId()).findFirst().orElse(null);
            if (f == null) {
                return "unknown field id " + m.getFieldId();
            }
            String err;
            switch (f.getMatchType()) {
                case TERNARY:
                    err = !m.hasTernary() ? "not ternary"
                            : fits(m.getTernary().getValue(), f.getBitwidth()) + fits(m.getTernary().getMask(),
                                                                                         f.getBitwidth());
                    break;
                case RANGE:
                    err = !m.hasRange() ? "not range"
                            : fits(m.getRange().getLow(), f.getBitwidth()) + fits(m.getRange().getHigh(),
                                                                                     f.getBitwidth());
                    break;
                case EXACT:
                    err = !m.hasExact() ? "not exact" : fits(m.getExact().getValue(), f.getBitwidth());
                    break;
                default:
                    err = "unsupported";
            }
            if (!err.isEmpty()) {
                return "field " + f.getName() + ": " + err;
            }
        }
        Set<Integer> refs = t.getActionRefsList().stream().map(P4InfoOuterClass.ActionRef::getId)
                .collect(Collectors.toSet());
        P4RuntimeOuterClass.Action a = e.getAction().getAction();
        if (!refs.contains(a.getActionId())) {
            return "action " + a.getActionId() + " not in table " + t.getPreamble().getName();
        }
        P4InfoOuterClass.Action info = p4info.getActionsList().stream()
                .filter(x -> x.getPreamble().getId() == a.getActionId()).findFirst().orElseThrow();
        if (info.getParamsCount() != a.getParamsCount()) {
            return "action " + info.getPreamble().getName() + " takes " + info.getParamsCount() + " params";
        }
        for (P4RuntimeOuterClass.Action.Param p : a.getParamsList()) {
            P4InfoOuterClass.Action.Param pi = info.getParamsList().stream()
                    .filter(x -> x.getId() == p.getParamId()).findFirst().orElse(null);
            if (pi == null) {
                return "unknown param id " + p.getParamId();
            }
            String err = fits(p.getValue(), pi.getBitwidth());
            if (!err.isEmpty()) {
                return "param " + pi.getName() + ": " + err;
            }
        }
        return null;
    }

    private static String fits(com.google.protobuf.ByteString v, int bits) {
        if (v.isEmpty()) {
            return "empty value";
        }
        if (v.size() > 1 && v.byteAt(0) == 0) {
            return "not canonical";
        }
        return new java.math.BigInteger(1, v.toByteArray()).bitLength() > bits ? "wider than " + bits + " bits" : "";
    }
}
