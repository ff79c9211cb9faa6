package org.metron.embedded.contract;

import org.junit.After;
import org.metron.app.spi.StoreFactory;
import org.metron.embedded.store.DurableStoreFactory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/** The embedded host's implementation: maps journaled on disk ({@link DurableStoreFactory}). */
public class EmbeddedStoreContractTest extends MetronMapContract {
    private Path dir;

    @Override
    protected StoreFactory factory() {
        try {
            dir = Files.createTempDirectory("metron-store-contract");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return new DurableStoreFactory(dir);
    }

    @After
    public void removeTheJournals() throws IOException {
        try (Stream<Path> s = Files.walk(dir)) {
            s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }
}
