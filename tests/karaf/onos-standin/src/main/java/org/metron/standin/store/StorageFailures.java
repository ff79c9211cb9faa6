package org.metron.standin.store;

import io.atomix.primitive.PrimitiveException;
import org.onosproject.store.service.ConsistentMap;
import org.onosproject.store.service.StorageException;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.concurrent.TimeoutException;

/**
 * Atomix's failures as ONOS's storage API reports them (core-primitives' AtomixFutures.adaptFuture and the sync
 * maps' complete()): a map call that Atomix fails (a Raft partition changing leader, a closed session, a timeout)
 * throws {@link StorageException} — ConcurrentModification, Timeout, Interrupted, Unavailable, or a plain
 * StorageException with the cause — never an io.atomix exception, so an app sees what it sees in ONOS.
 */
final class StorageFailures {
    private StorageFailures() {
    }

    /**
     * {@code map} with every call's Atomix failure turned into ONOS's: the whole call, so a failure while a snapshot
     * (keySet, values, entrySet) iterates Atomix's collections is adapted too.
     */
    @SuppressWarnings("unchecked")
    static <K, V> ConsistentMap<K, V> adapt(ConsistentMap<K, V> map) {
        return (ConsistentMap<K, V>) Proxy.newProxyInstance(StorageFailures.class.getClassLoader(),
                new Class<?>[] {ConsistentMap.class}, (proxy, method, args) -> {
                    try {
                        return method.invoke(map, args);
                    } catch (InvocationTargetException e) {
                        throw adapt(e.getCause());
                    }
                });
    }

    static Throwable adapt(Throwable e) {
        Throwable root = e;
        while (root.getCause() != null && !(root instanceof PrimitiveException)) {
            root = root.getCause();
        }
        if (root instanceof PrimitiveException.ConcurrentModification) {
            return new StorageException.ConcurrentModification();
        } else if (root instanceof PrimitiveException.Timeout || root instanceof TimeoutException) {
            return new StorageException.Timeout();
        } else if (root instanceof PrimitiveException.Interrupted) {
            return new StorageException.Interrupted();
        } else if (root instanceof PrimitiveException.Unavailable) {
            return new StorageException.Unavailable();
        } else if (root instanceof PrimitiveException) {
            return new StorageException(root);
        }
        return e; // not Atomix's (a serializer's error, say): as it was
    }
}
