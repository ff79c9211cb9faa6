package org.metron.standin.net;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.common.collect.ImmutableSet;
import org.metron.standin.cluster.AtomixNode;
import org.onosproject.event.AbstractListenerManager;
import org.onosproject.event.EventDeliveryService;
import org.onosproject.net.config.Config;
import org.onosproject.net.config.ConfigFactory;
import org.onosproject.net.config.InvalidConfigException;
import org.onosproject.net.config.NetworkConfigEvent;
import org.onosproject.net.config.NetworkConfigListener;
import org.onosproject.net.config.NetworkConfigRegistry;
import org.onosproject.net.config.NetworkConfigService;
import org.onosproject.net.config.SubjectFactory;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;

import static org.onosproject.net.config.NetworkConfigEvent.Type.CONFIG_ADDED;
import static org.onosproject.net.config.NetworkConfigEvent.Type.CONFIG_REGISTERED;
import static org.onosproject.net.config.NetworkConfigEvent.Type.CONFIG_REMOVED;
import static org.onosproject.net.config.NetworkConfigEvent.Type.CONFIG_UNREGISTERED;
import static org.onosproject.net.config.NetworkConfigEvent.Type.CONFIG_UPDATED;

/**
 * Network configuration (core-net's NetworkConfigManager + core-dist's store, stand-in): configs held as JSON per
 * subject and config class, created through the registered ConfigFactory, validated ({@code isValid()}, else
 * InvalidConfigException), with CONFIG_ADDED/UPDATED/REMOVED and CONFIG_REGISTERED/UNREGISTERED events. JSON for
 * a subject class/config key whose factory is not registered yet is kept and applied when the factory registers
 * (ONOS's pending configs). ONOS's real REST /onos/v1/network/configuration runs against this. In a cluster
 * ({@link AtomixNode} started) every node's changes reach every node ({@link SharedNetcfg}), as ONOS's store does.
 */
@Component(immediate = true, service = {NetworkConfigRegistry.class, NetworkConfigService.class})
public class NetworkConfigStandin extends AbstractListenerManager<NetworkConfigEvent, NetworkConfigListener>
        implements NetworkConfigRegistry {
    private final ObjectMapper mapper = new ObjectMapper();
    private final Map<Class<?>, ConfigFactory<?, ?>> factories = new ConcurrentHashMap<>();
    private final Map<String, SubjectFactory<?>> subjectFactoriesByKey = new ConcurrentHashMap<>();
    private final Map<Class<?>, SubjectFactory<?>> subjectFactoriesByClass = new ConcurrentHashMap<>();
    /** subject -> config class -> JSON. */
    private final Map<Object, Map<Class<?>, JsonNode>> configs = new ConcurrentHashMap<>();
    /** (subject class key, subject key, config key) -> JSON whose factory is not registered. */
    private final Map<List<String>, JsonNode> pending = new ConcurrentHashMap<>();

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected EventDeliveryService dispatcher;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected AtomixNode atomixNode;

    private volatile SharedNetcfg shared;

    @Activate
    protected void activate() {
        eventDispatcher = dispatcher;
        dispatcher.addSink(NetworkConfigEvent.class, listenerRegistry);
        BasicConfigs.FACTORIES.forEach(this::registerConfigFactory);
        if (atomixNode.atomix() != null) {
            shared = new SharedNetcfg(atomixNode.bytesMap("onos-network-configs"), new SharedNetcfg.Local() {
                @Override
                public void apply(String subjectClassKey, String subjectKey, String configKey, JsonNode json) {
                    followApply(subjectClassKey, subjectKey, configKey, json);
                }

                @Override
                public void remove(String subjectClassKey, String subjectKey, String configKey) {
                    SubjectFactory<?> sf = subjectFactoriesByKey.get(subjectClassKey);
                    if (sf != null) {
                        removeConfig(subjectClassKey, sf.createSubject(subjectKey), configKey);
                    } else {
                        pending.remove(List.of(subjectClassKey, subjectKey, configKey));
                    }
                }
            });
        }
    }

    /** Another node's config JSON, applied here unless this node has the same already. */
    private synchronized void followApply(String subjectClassKey, String subjectKey, String configKey,
                                          JsonNode json) {
        SubjectFactory<?> sf = subjectFactoriesByKey.get(subjectClassKey);
        if (sf == null) {
            pending.put(List.of(subjectClassKey, subjectKey, configKey), json);
            return;
        }
        Object subject = sf.createSubject(subjectKey);
        Class<? extends Config> configClass = getConfigClass(subjectClassKey, configKey);
        JsonNode have = configClass == null ? pending.get(List.of(subjectClassKey, subjectKey, configKey))
                : configs.getOrDefault(subject, Map.of()).get(configClass);
        if (!json.equals(have)) {
            applyConfig(subjectClassKey, subject, configKey, json);
        }
    }

    private void record(Object subject, String configKey, JsonNode json) {
        SharedNetcfg s = shared;
        SubjectFactory<?> sf = subjectFactoriesByClass.get(subject.getClass());
        if (s != null && sf != null) {
            if (json == null) {
                s.remove(sf.subjectClassKey(), subjectKey(sf, subject), configKey);
            } else {
                s.put(sf.subjectClassKey(), subjectKey(sf, subject), configKey, json);
            }
        }
    }

    @Deactivate
    protected void deactivate() {
        if (shared != null) {
            shared.close();
        }
        dispatcher.removeSink(NetworkConfigEvent.class);
    }

    // ------------------------------------------------------------------ factories
    @Override
    public synchronized void registerConfigFactory(ConfigFactory factory) {
        SubjectFactory<?> sf = factory.subjectFactory();
        factories.put(factory.configClass(), factory);
        subjectFactoriesByKey.put(sf.subjectClassKey(), sf);
        subjectFactoriesByClass.put(sf.subjectClass(), sf);
        post(new NetworkConfigEvent(CONFIG_REGISTERED, factory.configKey(), factory.configClass()));
        pending.entrySet().removeIf(e -> {
            List<String> k = e.getKey();
            if (!k.get(0).equals(sf.subjectClassKey()) || !k.get(2).equals(factory.configKey())) {
                return false;
            }
            try {
                applyConfig(sf.createSubject(k.get(1)), factory.configClass(), e.getValue());
            } catch (RuntimeException ex) {
                log().warn("pending config {} is invalid for {}: {}", k, factory.configClass().getName(),
                           ex.toString());
            }
            return true;
        });
    }

    @Override
    public synchronized void unregisterConfigFactory(ConfigFactory factory) {
        if (factories.remove(factory.configClass()) == null) {
            return;
        }
        SubjectFactory<?> sf = factory.subjectFactory();
        // as ONOS's store: the JSON stays, waiting for the factory to come back
        configs.forEach((subject, byClass) -> {
            JsonNode json = byClass.remove(factory.configClass());
            if (json != null) {
                pending.put(List.of(sf.subjectClassKey(), subjectKey(sf, subject), factory.configKey()), json);
            }
        });
        configs.values().removeIf(Map::isEmpty);
        post(new NetworkConfigEvent(CONFIG_UNREGISTERED, factory.configKey(), factory.configClass()));
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static String subjectKey(SubjectFactory sf, Object subject) {
        return sf.subjectKey(subject);
    }

    private static org.slf4j.Logger log() {
        return org.slf4j.LoggerFactory.getLogger(NetworkConfigStandin.class);
    }

    @Override
    public Set<ConfigFactory> getConfigFactories() {
        return ImmutableSet.copyOf(factories.values());
    }

    @Override
    @SuppressWarnings("unchecked")
    public <S, C extends Config<S>> Set<ConfigFactory<S, C>> getConfigFactories(Class<S> subjectClass) {
        return factories.values().stream().filter(f -> f.subjectFactory().subjectClass().equals(subjectClass))
                .map(f -> (ConfigFactory<S, C>) f).collect(ImmutableSet.toImmutableSet());
    }

    @Override
    @SuppressWarnings("unchecked")
    public <S, C extends Config<S>> ConfigFactory<S, C> getConfigFactory(Class<C> configClass) {
        return (ConfigFactory<S, C>) factories.get(configClass);
    }

    @Override
    public Set<Class> getSubjectClasses() {
        return ImmutableSet.copyOf(subjectFactoriesByClass.keySet());
    }

    @Override
    public SubjectFactory getSubjectFactory(String subjectClassKey) {
        return subjectFactoriesByKey.get(subjectClassKey);
    }

    @Override
    public SubjectFactory getSubjectFactory(Class subjectClass) {
        return subjectFactoriesByClass.get(subjectClass);
    }

    @Override
    public Class<? extends Config> getConfigClass(String subjectClassKey, String configKey) {
        return factories.values().stream()
                .filter(f -> f.subjectFactory().subjectClassKey().equals(subjectClassKey)
                        && f.configKey().equals(configKey))
                .map(f -> (Class<? extends Config>) f.configClass()).findFirst().orElse(null);
    }

    // ------------------------------------------------------------------ configs
    @SuppressWarnings("unchecked")
    private <S, C extends Config<S>> C create(S subject, Class<C> configClass, JsonNode json) {
        ConfigFactory<S, C> f = (ConfigFactory<S, C>) factories.get(configClass);
        if (f == null) {
            throw new IllegalArgumentException("no config factory registered for " + configClass.getName());
        }
        C config = f.createConfig();
        config.init(subject, f.configKey(), json, mapper,
                    c -> applyConfig(c.subject(), (Class<Config<Object>>) c.getClass(), c.node()));
        return config;
    }

    @Override
    public <S> Set<S> getSubjects(Class<S> subjectClass) {
        return configs.keySet().stream().filter(subjectClass::isInstance).map(subjectClass::cast)
                .collect(ImmutableSet.toImmutableSet());
    }

    @Override
    public <S, C extends Config<S>> Set<S> getSubjects(Class<S> subjectClass, Class<C> configClass) {
        return configs.entrySet().stream()
                .filter(e -> subjectClass.isInstance(e.getKey()) && e.getValue().containsKey(configClass))
                .map(e -> subjectClass.cast(e.getKey())).collect(ImmutableSet.toImmutableSet());
    }

    @Override
    @SuppressWarnings("unchecked")
    public <S> Set<? extends Config<S>> getConfigs(S subject) {
        return configs.getOrDefault(subject, Map.of()).entrySet().stream()
                .map(e -> create(subject, (Class<Config<S>>) e.getKey(), e.getValue()))
                .collect(Collectors.toSet());
    }

    @Override
    public <S, C extends Config<S>> C getConfig(S subject, Class<C> configClass) {
        JsonNode json = configs.getOrDefault(subject, Map.of()).get(configClass);
        return json == null ? null : create(subject, configClass, json);
    }

    @Override
    public <S, C extends Config<S>> C addConfig(S subject, Class<C> configClass) {
        C existing = getConfig(subject, configClass);
        return existing != null ? existing : create(subject, configClass, mapper.createObjectNode());
    }

    @Override
    public synchronized <S, C extends Config<S>> C applyConfig(S subject, Class<C> configClass, JsonNode json) {
        Objects.requireNonNull(json, "config JSON");
        C config = create(subject, configClass, json);
        if (!config.isValid()) {
            SubjectFactory<?> sf = subjectFactoriesByClass.get(configSubjectClass(configClass));
            throw new InvalidConfigException(sf == null ? "?" : sf.subjectClassKey(),
                                             sf == null ? subject.toString() : subjectKey(sf, subject),
                                             config.key());
        }
        JsonNode old = configs.computeIfAbsent(subject, s -> new ConcurrentHashMap<>()).put(configClass, json);
        if (!json.equals(old)) {
            record(subject, config.key(), json);
        }
        post(new NetworkConfigEvent(old == null ? CONFIG_ADDED : CONFIG_UPDATED, subject, config,
                                    old == null ? null : create(subject, configClass, old), configClass));
        return config;
    }

    private Class<?> configSubjectClass(Class<?> configClass) {
        ConfigFactory<?, ?> f = factories.get(configClass);
        return f == null ? null : f.subjectFactory().subjectClass();
    }

    @Override
    @SuppressWarnings("unchecked")
    public synchronized <S, C extends Config<S>> C applyConfig(String subjectClassKey, S subject, String configKey,
                                                               JsonNode json) {
        Class<C> configClass = (Class<C>) getConfigClass(subjectClassKey, configKey);
        if (configClass != null) {
            return applyConfig(subject, configClass, json);
        }
        SubjectFactory<?> sf = subjectFactoriesByKey.get(subjectClassKey);
        String subjectKey = sf == null ? subject.toString() : subjectKey(sf, subject);
        pending.put(List.of(subjectClassKey, subjectKey, configKey), json);
        if (shared != null) {
            shared.put(subjectClassKey, subjectKey, configKey, json);
        }
        return null;
    }

    @Override
    public synchronized <S, C extends Config<S>> void removeConfig(S subject, Class<C> configClass) {
        Map<Class<?>, JsonNode> byClass = configs.get(subject);
        JsonNode old = byClass == null ? null : byClass.remove(configClass);
        if (byClass != null && byClass.isEmpty()) {
            configs.remove(subject);
        }
        if (old != null) {
            ConfigFactory<?, ?> f = factories.get(configClass);
            if (f != null) {
                record(subject, f.configKey(), null);
            }
            post(new NetworkConfigEvent(CONFIG_REMOVED, subject, null, create(subject, configClass, old),
                                        configClass));
        }
    }

    @Override
    @SuppressWarnings("unchecked")
    public synchronized <S> void removeConfig(String subjectClassKey, S subject, String configKey) {
        Class<Config<S>> configClass = (Class<Config<S>>) getConfigClass(subjectClassKey, configKey);
        if (configClass != null) {
            removeConfig(subject, configClass);
        } else {
            SubjectFactory<?> sf = subjectFactoriesByKey.get(subjectClassKey);
            String subjectKey = sf == null ? subject.toString() : subjectKey(sf, subject);
            pending.remove(List.of(subjectClassKey, subjectKey, configKey));
            if (shared != null) {
                shared.remove(subjectClassKey, subjectKey, configKey);
            }
        }
    }

    @Override
    @SuppressWarnings("unchecked")
    public synchronized <S> void removeConfig(S subject) {
        Map<Class<?>, JsonNode> byClass = configs.get(subject);
        if (byClass != null) {
            ImmutableSet.copyOf(byClass.keySet()).forEach(c -> removeConfig(subject, (Class<Config<S>>) c));
        }
        SubjectFactory<?> sf = subjectFactoriesByClass.get(subject.getClass());
        if (sf != null) {
            String key = subjectKey(sf, subject);
            pending.keySet().removeIf(k -> k.get(1).equals(key));
        }
    }

    @Override
    public synchronized <S> void removeConfig() {
        ImmutableSet.copyOf(configs.keySet()).forEach(this::removeConfig);
        pending.clear();
    }
}
