package org.metron.standin.net;

import com.google.common.collect.ImmutableSet;
import org.metron.standin.cluster.AtomixNode;
import org.onosproject.event.EventDeliveryService;
import org.onosproject.net.ConnectPoint;
import org.onosproject.net.DefaultLink;
import org.onosproject.net.DeviceId;
import org.onosproject.net.Link;
import org.onosproject.net.LinkKey;
import org.onosproject.net.device.DeviceEvent;
import org.onosproject.net.device.DeviceListener;
import org.onosproject.net.device.DeviceService;
import org.onosproject.net.link.LinkAdminService;
import org.onosproject.net.link.LinkDescription;
import org.onosproject.net.link.LinkEvent;
import org.onosproject.net.link.LinkListener;
import org.onosproject.net.link.LinkProvider;
import org.onosproject.net.link.LinkProviderRegistry;
import org.onosproject.net.link.LinkProviderService;
import org.onosproject.net.link.LinkService;
import org.onosproject.net.provider.AbstractListenerProviderRegistry;
import org.onosproject.net.provider.AbstractProviderService;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;

import static org.onosproject.net.LinkKey.linkKey;

/**
 * The link subsystem (core-net's LinkManager + link store, stand-in): providers report links between known,
 * available devices; LINK_ADDED/UPDATED/REMOVED events; as ONOS does, links of a device that goes away or
 * offline, and links at a port that is disabled or removed, are removed.
 * <p>
 * In a cluster, reported and vanished links are shared through {@link SharedLinks} (ONOS's GossipLinkStore /
 * ECLinkStore): every node shows the cluster's links between the devices available to it.
 */
@Component(immediate = true, service = {LinkService.class, LinkAdminService.class, LinkProviderRegistry.class})
public class LinkManagerStandin
        extends AbstractListenerProviderRegistry<LinkEvent, LinkListener, LinkProvider, LinkProviderService>
        implements LinkAdminService, LinkProviderRegistry {
    private final Logger log = LoggerFactory.getLogger(getClass());
    private final Map<LinkKey, Link> links = new ConcurrentHashMap<>();
    private final DeviceListener deviceListener = this::deviceChanged;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected EventDeliveryService dispatcher;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected DeviceService deviceService;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected AtomixNode atomixNode;

    /** In a cluster: the links every node shares (null for one node). */
    private volatile SharedLinks shared;

    @Activate
    protected void activate() {
        eventDispatcher = dispatcher;
        dispatcher.addSink(LinkEvent.class, listenerRegistry);
        deviceService.addListener(deviceListener);
        if (atomixNode.atomix() != null) {
            shared = new SharedLinks(atomixNode.bytesMap("onos-links"), this::show,
                                     k -> removeLink(k.src(), k.dst()));
        }
    }

    @Deactivate
    protected void deactivate() {
        if (shared != null) {
            shared.close();
        }
        deviceService.removeListener(deviceListener);
        dispatcher.removeSink(LinkEvent.class);
    }

    @Override
    protected LinkProviderService createProviderService(LinkProvider provider) {
        return new ProviderService(provider);
    }

    private void deviceChanged(DeviceEvent e) {
        switch (e.type()) {
            case DEVICE_REMOVED:
                removeLinks(e.subject().id());
                break;
            case DEVICE_AVAILABILITY_CHANGED:
                if (!deviceService.isAvailable(e.subject().id())) {
                    removeLinks(e.subject().id());
                }
                break;
            case PORT_REMOVED:
                removeLinks(new ConnectPoint(e.subject().id(), e.port().number()));
                break;
            case PORT_UPDATED:
                if (!e.port().isEnabled()) {
                    removeLinks(new ConnectPoint(e.subject().id(), e.port().number()));
                }
                break;
            default:
                break;
        }
        SharedLinks s = shared;
        DeviceId id = e.subject().id();
        if (s != null && deviceService.isAvailable(id) && (e.type() == DeviceEvent.Type.DEVICE_ADDED
                || e.type() == DeviceEvent.Type.DEVICE_AVAILABILITY_CHANGED || e.type() == DeviceEvent.Type.PORT_ADDED
                || e.type() == DeviceEvent.Type.DEVICE_UPDATED)) {
            // a device this node learnt (or saw come back) after its links were reported: they show up now
            s.declared().stream().filter(l -> l.src().deviceId().equals(id) || l.dst().deviceId().equals(id))
                    .filter(l -> !links.containsKey(linkKey(l.src(), l.dst()))).forEach(this::show);
        }
    }

    private synchronized void removeWhere(Predicate<Link> which) {
        for (Link l : ImmutableSet.copyOf(links.values())) {
            if (which.test(l) && links.remove(linkKey(l.src(), l.dst())) != null) {
                post(new LinkEvent(LinkEvent.Type.LINK_REMOVED, l));
            }
        }
    }

    /** What one provider reports. */
    private final class ProviderService extends AbstractProviderService<LinkProvider>
            implements LinkProviderService {
        ProviderService(LinkProvider provider) {
            super(provider);
        }

        @Override
        public void linkDetected(LinkDescription d) {
            checkValidity();
            if (!deviceService.isAvailable(d.src().deviceId()) || !deviceService.isAvailable(d.dst().deviceId())) {
                log.info("link {} -> {} ignored: an end device is unknown or offline", d.src(), d.dst());
                return;
            }
            Link link = DefaultLink.builder().providerId(provider().id()).src(d.src()).dst(d.dst()).type(d.type())
                    .state(Link.State.ACTIVE).isExpected(d.isExpected()).annotations(d.annotations()).build();
            if (shared != null) {
                shared.put(link);
            }
            show(link);
        }

        @Override
        public void linkVanished(LinkDescription d) {
            checkValidity();
            if (shared != null) {
                shared.remove(linkKey(d.src(), d.dst()));
            }
            removeLink(d.src(), d.dst());
        }

        @Override
        public void linksVanished(ConnectPoint cp) {
            checkValidity();
            vanishShared(l -> l.src().equals(cp) || l.dst().equals(cp));
            removeLinks(cp);
        }

        @Override
        public void linksVanished(DeviceId id) {
            checkValidity();
            vanishShared(l -> l.src().deviceId().equals(id) || l.dst().deviceId().equals(id));
            removeLinks(id);
        }
    }

    private void vanishShared(Predicate<Link> which) {
        SharedLinks s = shared;
        if (s != null) {
            s.declared().stream().filter(which).forEach(l -> s.remove(linkKey(l.src(), l.dst())));
        }
    }

    /** A link between devices available here is stored (LINK_ADDED, or LINK_UPDATED if it changed). */
    private void show(Link link) {
        if (!deviceService.isAvailable(link.src().deviceId()) || !deviceService.isAvailable(link.dst().deviceId())) {
            log.info("link {} -> {} not shown: an end device is unknown or offline here", link.src(), link.dst());
            return;
        }
        synchronized (this) {
            Link old = links.put(linkKey(link.src(), link.dst()), link);
            if (old == null) {
                post(new LinkEvent(LinkEvent.Type.LINK_ADDED, link));
            } else if (old.type() != link.type() || !Objects.equals(old.annotations(), link.annotations())) {
                post(new LinkEvent(LinkEvent.Type.LINK_UPDATED, link));
            }
        }
    }

    @Override
    public int getLinkCount() {
        return links.size();
    }

    @Override
    public Iterable<Link> getLinks() {
        return ImmutableSet.copyOf(links.values());
    }

    @Override
    public Iterable<Link> getActiveLinks() {
        return filter(l -> l.state() == Link.State.ACTIVE);
    }

    private Set<Link> filter(Predicate<Link> which) {
        return links.values().stream().filter(which).collect(ImmutableSet.toImmutableSet());
    }

    @Override
    public Set<Link> getDeviceLinks(DeviceId id) {
        return filter(l -> l.src().deviceId().equals(id) || l.dst().deviceId().equals(id));
    }

    @Override
    public Set<Link> getDeviceEgressLinks(DeviceId id) {
        return filter(l -> l.src().deviceId().equals(id));
    }

    @Override
    public Set<Link> getDeviceIngressLinks(DeviceId id) {
        return filter(l -> l.dst().deviceId().equals(id));
    }

    @Override
    public Set<Link> getLinks(ConnectPoint cp) {
        return filter(l -> l.src().equals(cp) || l.dst().equals(cp));
    }

    @Override
    public Set<Link> getEgressLinks(ConnectPoint cp) {
        return filter(l -> l.src().equals(cp));
    }

    @Override
    public Set<Link> getIngressLinks(ConnectPoint cp) {
        return filter(l -> l.dst().equals(cp));
    }

    @Override
    public Link getLink(ConnectPoint src, ConnectPoint dst) {
        return links.get(linkKey(src, dst));
    }

    @Override
    public void removeLinks(ConnectPoint cp) {
        removeWhere(l -> l.src().equals(cp) || l.dst().equals(cp));
    }

    @Override
    public void removeLinks(DeviceId id) {
        removeWhere(l -> l.src().deviceId().equals(id) || l.dst().deviceId().equals(id));
    }

    @Override
    public void removeLink(ConnectPoint src, ConnectPoint dst) {
        removeWhere(l -> l.src().equals(src) && l.dst().equals(dst));
    }
}
