package org.metron.standin;

import com.google.common.collect.ImmutableSet;
import org.onosproject.cfg.ComponentConfigService;
import org.onosproject.cfg.ConfigProperty;
import org.osgi.service.component.annotations.Component;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * ComponentConfigService (core-net's ComponentConfigManager stand-in): records registered components and the
 * properties set on them, as strings. It does not push them into Configuration Admin as ONOS does.
 */
@Component(immediate = true, service = ComponentConfigService.class)
public class ComponentConfigStandin implements ComponentConfigService {
    private final Map<String, Map<String, ConfigProperty>> components = new ConcurrentHashMap<>();

    @Override
    public Set<String> getComponentNames() {
        return ImmutableSet.copyOf(components.keySet());
    }

    @Override
    public void registerProperties(Class<?> componentClass) {
        components.putIfAbsent(componentClass.getName(), new ConcurrentHashMap<>());
    }

    @Override
    public void unregisterProperties(Class<?> componentClass, boolean clear) {
        components.remove(componentClass.getName());
    }

    @Override
    public Set<ConfigProperty> getProperties(String component) {
        Map<String, ConfigProperty> p = components.get(component);
        return p == null ? null : ImmutableSet.copyOf(p.values());
    }

    @Override
    public void setProperty(String component, String name, String value) {
        components.computeIfAbsent(component, c -> new ConcurrentHashMap<>())
                .put(name, ConfigProperty.defineProperty(name, ConfigProperty.Type.STRING, value, ""));
    }

    @Override
    public void preSetProperty(String component, String name, String value) {
        setProperty(component, name, value);
    }

    @Override
    public void preSetProperty(String component, String name, String value, boolean override) {
        setProperty(component, name, value);
    }

    @Override
    public void unsetProperty(String component, String name) {
        Map<String, ConfigProperty> p = components.get(component);
        if (p != null) {
            p.remove(name);
        }
    }

    @Override
    public ConfigProperty getProperty(String component, String name) {
        Map<String, ConfigProperty> p = components.get(component);
        return p == null ? null : p.get(name);
    }
}
