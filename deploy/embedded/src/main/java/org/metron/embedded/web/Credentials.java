package org.metron.embedded.web;

import java.io.IOException;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;

/**
 * Users of the embedded host's REST API and dashboard, in {@code <data>/users.properties} (owner-only, like
 * Karaf's users.properties in ONOS): {@code name = password,role[,role...]}. Created on first start with one
 * {@code admin} user (roles admin, viewer) and a random password; the CLI reads the same file.
 */
public final class Credentials {
    public static final String FILE = "users.properties";
    public static final String ADMIN = "admin";

    private final Map<String, String[]> users;

    private Credentials(Map<String, String[]> users) {
        this.users = users;
    }

    public static Credentials loadOrCreate(Path dataDir) {
        Path file = dataDir.resolve(FILE);
        try {
            if (!Files.exists(file)) {
                byte[] secret = new byte[18];
                new SecureRandom().nextBytes(secret);
                Files.createFile(file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
                try (Writer w = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
                    w.write("# Metron embedded host users: name = password,role[,role...] (roles: admin, viewer)\n");
                    w.write(ADMIN + " = " + Base64.getUrlEncoder().withoutPadding().encodeToString(secret)
                            + ",admin,viewer\n");
                }
            }
            Properties p = new Properties();
            try (Reader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
                p.load(r);
            }
            Map<String, String[]> users = new TreeMap<>();
            for (String name : p.stringPropertyNames()) {
                String[] parts = p.getProperty(name).split(",");
                if (parts.length < 2) {
                    throw new IllegalArgumentException(file + ": user '" + name + "' needs a password and a role");
                }
                users.put(name, parts);
            }
            return new Credentials(users);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read or create " + file, e);
        }
    }

    /** The user's roles when the password matches (constant-time compare), else empty. */
    public Optional<Set<String>> authenticate(String user, String password) {
        String[] entry = users.get(user);
        if (entry == null || !MessageDigest.isEqual(entry[0].trim().getBytes(StandardCharsets.UTF_8),
                                                    password.getBytes(StandardCharsets.UTF_8))) {
            return Optional.empty();
        }
        java.util.Set<String> roles = new java.util.TreeSet<>();
        for (int i = 1; i < entry.length; i++) {
            roles.add(entry[i].trim());
        }
        return Optional.of(Set.copyOf(roles));
    }

    /** "user:password" for a client (CLI, tests) of this host. */
    public String basic(String user) {
        String[] entry = users.get(user);
        if (entry == null) {
            throw new IllegalArgumentException("no user '" + user + "' in " + FILE);
        }
        return user + ":" + entry[0].trim();
    }
}
