package org.metron.embedded.store;

import org.metron.app.local.LocalMetronMap;
import org.metron.app.spi.MetronMap;
import org.onlab.util.KryoNamespace;
import org.onosproject.store.service.Versioned;
import org.slf4j.LoggerFactory;

import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.zip.CRC32;

/**
 * A {@link MetronMap} that survives restarts: the controller's own single-instance map
 * ({@link LocalMetronMap}, same semantics and Kryo round trip) plus an append-only journal
 * {@code <name>.journal} of the bytes the map encoded: one record per write, one data sync per write (a
 * deployment makes about ten writes before its traffic flows, each used to cost a whole-map rewrite). A record
 * torn by a crash fails its checksum and is cut off on the next load, so each write is either in or out. The
 * journal is compacted (live entries rewritten to a new file, atomically renamed) when it grows past four times
 * what is live. Versions restart at 1 after a reload: no one holds a version across a restart.
 */
final class DurableMetronMap<K, V> implements MetronMap<K, V> {
    private static final int MAGIC = 0x4d544a31; // "MTJ1": journal
    private static final int LEGACY_MAGIC = 0x4d544d31; // "MTM1": a whole-map snapshot (earlier hosts)
    private static final int REMOVED = -1;
    private static final long COMPACT_FLOOR = 1 << 20;

    private final LocalMetronMap<K, V> map;
    private final KryoNamespace namespace;
    private final Path journal;
    /** Encoded entries as they are in the journal, for compaction (same bytes as the map holds). */
    private final Map<ByteBuffer, byte[]> live = new HashMap<>();
    private long liveBytes;
    private FileChannel out;
    private boolean loading;

    /**
     * @param journal the map's journal (created when missing)
     * @param legacy  a whole-map snapshot file written by earlier hosts: loaded, journaled, deleted
     */
    DurableMetronMap(Path journal, Path legacy, KryoNamespace namespace) {
        this.journal = journal;
        this.namespace = namespace;
        this.map = new LocalMetronMap<>(namespace, this::write);
        long valid = load();
        try {
            out = FileChannel.open(journal, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
            out.truncate(valid); // a record torn by a crash
            out.position(valid);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open store journal " + journal, e);
        }
        loadLegacy(legacy);
    }

    /** Replays the journal; answers how many of its bytes hold whole records. */
    private long load() {
        byte[] all;
        try {
            all = Files.readAllBytes(journal);
        } catch (NoSuchFileException e) {
            return 0;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read store journal " + journal, e);
        }
        ByteBuffer b = ByteBuffer.wrap(all);
        loading = true;
        try {
            while (b.remaining() >= 16) {
                int start = b.position();
                if (b.getInt() != MAGIC) {
                    throw new IllegalStateException("store journal " + journal + " is corrupt at byte " + start);
                }
                int keyLength = b.getInt();
                int valueLength = b.getInt();
                int body = keyLength + Math.max(valueLength, 0);
                if (keyLength < 0 || valueLength < REMOVED || b.remaining() < body + 4) {
                    b.position(start);
                    break; // torn tail
                }
                byte[] key = new byte[keyLength];
                b.get(key);
                byte[] value = valueLength == REMOVED ? null : new byte[valueLength];
                if (value != null) {
                    b.get(value);
                }
                if (b.getInt() != crc(key, value)) {
                    b.position(start);
                    break; // torn tail
                }
                apply(key, value);
            }
        } catch (IllegalStateException e) {
            throw e;
        } catch (RuntimeException e) {
            throw new IllegalStateException("store journal " + journal + " does not decode with the map's namespace: "
                    + e, e);
        } finally {
            loading = false;
        }
        return b.position();
    }

    private void apply(byte[] key, byte[] value) {
        K k = namespace.deserialize(key);
        if (value == null) {
            map.remove(k);
        } else {
            map.put(k, namespace.deserialize(value));
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
                    map.put(key, value); // journaled
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

    private static int crc(byte[] key, byte[] value) {
        CRC32 c = new CRC32();
        c.update(key);
        if (value != null) {
            c.update(value);
        }
        return (int) c.getValue();
    }

    private static ByteBuffer record(byte[] key, byte[] value) {
        ByteBuffer r = ByteBuffer.allocate(16 + key.length + (value == null ? 0 : value.length));
        r.putInt(MAGIC).putInt(key.length).putInt(value == null ? REMOVED : value.length).put(key);
        if (value != null) {
            r.put(value);
        }
        return r.putInt(crc(key, value)).flip();
    }

    /** Called by the map, with its lock held, before it applies a change; throwing vetoes the change. */
    private void write(byte[] key, byte[] value) {
        if (!loading) {
            compactIfLarge();
            append(record(key, value));
        }
        byte[] old = value == null ? live.remove(ByteBuffer.wrap(key)) : live.put(ByteBuffer.wrap(key), value);
        liveBytes += (value == null ? 0 : key.length + value.length) - (old == null ? 0 : key.length + old.length);
    }

    private void append(ByteBuffer r) {
        if (out == null) {
            throw new UncheckedIOException(new IOException("store journal " + journal + " could not be reopened "
                    + "after compaction; restart the host"));
        }
        long at = -1;
        try {
            at = out.position();
            while (r.hasRemaining()) {
                out.write(r);
            }
            out.force(false);
        } catch (IOException e) {
            try {
                if (at >= 0) {
                    out.truncate(at); // the map keeps the old value: so must the journal
                    out.position(at);
                }
            } catch (IOException again) {
                e.addSuppressed(again);
            }
            throw new UncheckedIOException("cannot write store journal " + journal, e);
        }
    }

    /** Rewrites the journal with only the live entries once it is mostly dead records. */
    private void compactIfLarge() {
        try {
            if (out == null || out.position() < Math.max(COMPACT_FLOOR, 4 * liveBytes)) {
                return;
            }
            Path tmp = journal.resolveSibling(journal.getFileName() + ".tmp");
            try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                                                   StandardOpenOption.TRUNCATE_EXISTING)) {
                for (Map.Entry<ByteBuffer, byte[]> e : live.entrySet()) {
                    ByteBuffer r = record(e.getKey().array(), e.getValue());
                    while (r.hasRemaining()) {
                        ch.write(r);
                    }
                }
                ch.force(true);
            }
            Files.move(tmp, journal, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            // the old journal is intact and complete: keep appending to it
            LoggerFactory.getLogger(DurableMetronMap.class).warn("Could not compact {}: {}", journal, e.toString());
            return;
        }
        FileChannel old = out;
        out = null;
        try (FileChannel d = FileChannel.open(journal.getParent(), StandardOpenOption.READ)) {
            d.force(true);
            old.close();
            out = FileChannel.open(journal, StandardOpenOption.WRITE);
            out.position(out.size());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot reopen store journal " + journal + " after compaction", e);
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

    @Override
    public void addListener(java.util.function.Consumer<K> changed) {
        map.addListener(changed);
    }

    @Override
    public void removeListener(java.util.function.Consumer<K> changed) {
        map.removeListener(changed);
    }
}
