package org.metron.embedded.store;

import org.metron.app.spi.MetronMap;
import org.metron.app.spi.StoreFactory;
import org.onlab.util.KryoNamespace;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;

/** The embedded host's stores: one durable map per name, journaled in {@code <dir>/<name>.journal}. */
public final class DurableStoreFactory implements StoreFactory {
    private static final Pattern NAME = Pattern.compile("[a-z0-9][a-z0-9-]{0,63}");
    private final Path dir;
    private final Map<String, MetronMap<?, ?>> maps = new ConcurrentHashMap<>();

    public DurableStoreFactory(Path dir) {
        try {
            this.dir = Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create the store directory " + dir, e);
        }
    }

    @Override
    @SuppressWarnings("unchecked")
    public <K, V> MetronMap<K, V> map(String name, KryoNamespace namespace) {
        if (!NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("map name '" + name + "' must match " + NAME.pattern());
        }
        return (MetronMap<K, V>) maps.computeIfAbsent(name, n -> new DurableMetronMap<K, V>(
                dir.resolve(n + ".journal"), dir.resolve(n + ".map"), namespace));
    }
}
