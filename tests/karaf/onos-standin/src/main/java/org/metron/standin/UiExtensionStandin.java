package org.metron.standin;

import com.google.common.collect.ImmutableList;
import org.onosproject.ui.UiExtension;
import org.onosproject.ui.UiExtensionService;
import org.onosproject.ui.UiView;
import org.onosproject.ui.lion.LionBundle;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Modified;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The legacy GUI's UiExtensionService (ONOS's "gui" app, not on Maven Central; stand-in): records registered
 * extensions; the {@code standin:gui-request} command drives their message handlers as the GUI's web socket
 * does. Present only while the configuration PID {@value #PID} exists, so a test can show an app with and without
 * a GUI (ONOS 2.7 runs gui2 by default, which does not offer this service).
 */
@Component(immediate = true, service = UiExtensionService.class, configurationPid = UiExtensionStandin.PID,
        configurationPolicy = ConfigurationPolicy.REQUIRE)
public class UiExtensionStandin implements UiExtensionService {
    public static final String PID = "org.metron.standin.gui";
    private final List<UiExtension> extensions = new CopyOnWriteArrayList<>();

    /**
     * A change of the configuration keeps the service (as ONOS's GUI stays up when its configuration changes).
     * Without this method SCR deactivates and reactivates the component on every update of the PID, and Karaf's
     * configuration commands may update it more than once (a Karaf test saw the service gone for a moment after
     * the view had registered: "GUI stand-in not enabled" at load 40).
     */
    @Modified
    protected void modified() {
        // nothing to reread: the PID's presence is what enables the stand-in
    }

    @Override
    public void register(UiExtension extension) {
        if (!extensions.contains(extension)) {
            extensions.add(extension);
        }
    }

    @Override
    public void unregister(UiExtension extension) {
        extensions.remove(extension);
    }

    @Override
    public List<UiExtension> getExtensions() {
        return ImmutableList.copyOf(extensions);
    }

    @Override
    public UiExtension getViewExtension(String viewId) {
        for (UiExtension e : extensions) {
            for (UiView v : e.views()) {
                if (v.id().equals(viewId)) {
                    return e;
                }
            }
        }
        return null;
    }

    @Override
    public LionBundle getNavLionBundle() {
        return null;
    }

    @Override
    public void refreshModel() {
    }
}
