package org.metron.embedded.store;

import com.google.common.hash.Hashing;
import org.metron.app.local.LocalMetronMap;
import org.metron.app.spi.MetronMap;
import org.onlab.util.KryoNamespace;
import org.onosproject.store.service.Versioned;

import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.Optional;

/**
 * A {@link MetronMap} that survives restarts: the controller's own single-instance map
 * ({@link LocalMetronMap}, same semantics and Kryo round trip) plus one file per entry under
 * {@code <dir>/<name>/}, holding the bytes the map encoded. A write replaces only its own entry's file (temp
 * file, fsync, atomic rename, directory fsync), so a crash leaves each entry either old or new, and one chain's
 * tens of thousands of installed rules are never rewritten because another chain changed. Versions restart at
 * 1 after a reload: no one holds a version across a restart.
 */
final class DurableMetronMap<K, V> implements MetronMap<K, V> {
    private static final int MAGIC = 0x4d544d32; // "MTM2": one entry
    private static final int LEGACY_MAGIC = 0x4d544d31; // "MTM1": a whole-map snapshot (earlier hosts)
    private static final String ENTRY = ".entry";

    private final LocalMetronMap<K, V> map;
    private final KryoNamespace namespace;
    private final Path dir;
    private boolean loading;

    /**
     * @param dir    the directory of this map's entries (created when missing)
     * @param legacy a whole-map snapshot file written by earlier hosts: loaded, rewritten as entries, deleted
     */
    DurableMetronMap(Path dir, Path legacy, KryoNamespace namespace) {
        this.dir = dir;
        this.namespace = namespace;
        this.map = new LocalMetronMap<>(namespace, this::write);
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create the store directory " + dir, e);
        }
        load();
        loadLegacy(legacy);
    }

    private void load() {
        loading = true;
        try (DirectoryStream<Path> tmps = Files.newDirectoryStream(dir, "*" + ENTRY + ".tmp")) {
            for (Path t : tmps) {
                Files.delete(t); // a write the host did not finish: the entry's file still holds the old value
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot clean the store directory " + dir, e);
        }
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, "*" + ENTRY)) {
            for (Path f : files) {
                try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(Files.readAllBytes(f)))) {
                    if (in.readInt() != MAGIC) {
                        throw new IllegalStateException("store file " + f + " is not a Metron map entry");
                    }
                    map.put(namespace.deserialize(bytes(in)), namespace.deserialize(bytes(in)));
                } catch (EOFException e) {
                    throw new IllegalStateException("store file " + f + " is truncated", e);
                } catch (IllegalStateException e) {
                    throw e;
                } catch (RuntimeException e) {
                    throw new IllegalStateException("store file " + f + " does not decode with the map's namespace: "
                            + e, e);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read store directory " + dir, e);
        } finally {
            loading = false;
        }
    }

    private void loadLegacy(Path legacy) {
        byte[] all;
        try {
            all = Files.readAllBytes(legacy);
        } catch (NoSuchFileException e) {
            return;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read store file " + legacy, e);
        }
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(all))) {
            if (in.readInt() != LEGACY_MAGIC) {
                throw new IllegalStateException("store file " + legacy + " is not a Metron map snapshot");
            }
            for (int n = in.readInt(); n > 0; n--) {
                K key = namespace.deserialize(bytes(in));
                V value = namespace.deserialize(bytes(in));
                if (map.get(key).isEmpty()) {
                    map.put(key, value); // writes the entry's file
                }
            }
        } catch (EOFException e) {
            throw new IllegalStateException("store file " + legacy + " is truncated", e);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read store file " + legacy, e);
        } catch (IllegalStateException e) {
            throw e;
        } catch (RuntimeException e) {
            throw new IllegalStateException("store file " + legacy + " does not decode with the map's namespace: "
                    + e, e);
        }
        try {
            Files.delete(legacy);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot delete converted store file " + legacy, e);
        }
    }

    private static byte[] bytes(DataInputStream in) throws IOException {
        byte[] b = new byte[in.readInt()];
        in.readFully(b);
        return b;
    }

    /** The entry's file: named by a hash of the encoded key (keys may be longer than a file name). */
    private Path file(byte[] key) {
        return dir.resolve(Hashing.murmur3_128().hashBytes(key).toString() + ENTRY);
    }

    /** Called by the map, with its lock held, before it applies a change; throwing vetoes the change. */
    private void write(byte[] key, byte[] value) {
        if (loading) {
            return;
        }
        Path file = file(key);
        try {
            if (value == null) {
                Files.deleteIfExists(file);
            } else {
                Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
                ByteBuffer buf = ByteBuffer.allocate(12 + key.length + value.length);
                buf.putInt(MAGIC).putInt(key.length).put(key).putInt(value.length).put(value).flip();
                try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                                                       StandardOpenOption.TRUNCATE_EXISTING)) {
                    while (buf.hasRemaining()) {
                        ch.write(buf);
                    }
                    ch.force(true);
                }
                Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            }
            try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
                d.force(true); // the rename or deletion itself
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write store file " + file, e);
        }
    }

    @Override
    public Optional<Versioned<V>> get(K key) {
        return map.get(key);
    }

    @Override
    public boolean putIfAbsent(K key, V value) {
        return map.putIfAbsent(key, value);
    }

    @Override
    public boolean replace(K key, long version, V value) {
        return map.replace(key, version, value);
    }

    @Override
    public void put(K key, V value) {
        map.put(key, value);
    }

    @Override
    public Optional<V> remove(K key) {
        return map.remove(key);
    }

    @Override
    public Map<K, V> snapshot() {
        return map.snapshot();
    }
}
