package org.metron.embedded.store;

import org.metron.app.local.LocalMetronMap;
import org.metron.app.spi.MetronMap;
import org.onlab.util.KryoNamespace;
import org.onosproject.store.service.Versioned;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.Optional;

/**
 * A {@link MetronMap} that survives restarts: the controller's own single-instance map
 * ({@link LocalMetronMap}, same semantics and Kryo round trip) plus a snapshot on disk rewritten after every
 * successful write (temp file, fsync, atomic rename), so a crash leaves either the old or the new state.
 * Versions restart at 1 after a reload: no one holds a version across a restart.
 */
final class DurableMetronMap<K, V> implements MetronMap<K, V> {
    private static final int MAGIC = 0x4d544d31; // "MTM1"

    private final LocalMetronMap<K, V> map;
    private final KryoNamespace namespace;
    private final Path file;

    DurableMetronMap(Path file, KryoNamespace namespace) {
        this.file = file;
        this.namespace = namespace;
        this.map = new LocalMetronMap<>(namespace);
        load();
    }

    private void load() {
        try (InputStream raw = Files.newInputStream(file); DataInputStream in = new DataInputStream(raw)) {
            if (in.readInt() != MAGIC) {
                throw new IllegalStateException("store file " + file + " is not a Metron map snapshot");
            }
            int n = in.readInt();
            for (int i = 0; i < n; i++) {
                K key = namespace.deserialize(bytes(in));
                V value = namespace.deserialize(bytes(in));
                map.put(key, value);
            }
        } catch (NoSuchFileException e) {
            // first start: empty map
        } catch (EOFException e) {
            throw new IllegalStateException("store file " + file + " is truncated", e);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read store file " + file, e);
        } catch (RuntimeException e) {
            if (e instanceof IllegalStateException) {
                throw e;
            }
            throw new IllegalStateException("store file " + file + " does not decode with the map's namespace: "
                    + e, e);
        }
    }

    private static byte[] bytes(DataInputStream in) throws IOException {
        byte[] b = new byte[in.readInt()];
        in.readFully(b);
        return b;
    }

    /** Called with the map's lock held, after a successful write. */
    private void persist() {
        Map<K, V> snapshot = map.snapshot();
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                                               StandardOpenOption.TRUNCATE_EXISTING)) {
            OutputStream raw = Channels.newOutputStream(ch);
            DataOutputStream out = new DataOutputStream(new java.io.BufferedOutputStream(raw));
            out.writeInt(MAGIC);
            out.writeInt(snapshot.size());
            for (Map.Entry<K, V> e : snapshot.entrySet()) {
                byte[] k = namespace.serialize(e.getKey());
                byte[] v = namespace.serialize(e.getValue());
                out.writeInt(k.length);
                out.write(k);
                out.writeInt(v.length);
                out.write(v);
            }
            out.flush();
            ch.force(true);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write store file " + tmp, e);
        }
        try {
            Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot replace store file " + file, e);
        }
    }

    @Override
    public synchronized Optional<Versioned<V>> get(K key) {
        return map.get(key);
    }

    @Override
    public synchronized boolean putIfAbsent(K key, V value) {
        boolean done = map.putIfAbsent(key, value);
        if (done) {
            persist();
        }
        return done;
    }

    @Override
    public synchronized boolean replace(K key, long version, V value) {
        boolean done = map.replace(key, version, value);
        if (done) {
            persist();
        }
        return done;
    }

    @Override
    public synchronized void put(K key, V value) {
        map.put(key, value);
        persist();
    }

    @Override
    public synchronized Optional<V> remove(K key) {
        Optional<V> old = map.remove(key);
        if (old.isPresent()) {
            persist();
        }
        return old;
    }

    @Override
    public synchronized Map<K, V> snapshot() {
        return map.snapshot();
    }
}
