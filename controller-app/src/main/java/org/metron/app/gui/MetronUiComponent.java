package org.metron.app.gui;

import com.google.common.collect.ImmutableList;
import org.metron.app.api.MetronService;
import org.metron.app.scaling.ScalingService;
import org.onosproject.ui.UiExtension;
import org.onosproject.ui.UiExtensionService;
import org.onosproject.ui.UiMessageHandlerFactory;
import org.onosproject.ui.UiView;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;

/**
 * Registers the "Metron" view in the ONOS GUI's Network category whenever a GUI is running. The GUI is optional
 * (no GUI app is required by Metron, and ONOS 2.7 starts gui2, not the legacy GUI that offers
 * {@link UiExtensionService}): the reference is optional and dynamic, so this component is active without a GUI
 * and the view appears or goes as a GUI comes or goes, never holding the rest of the app back.
 */
@Component(immediate = true)
public class MetronUiComponent {
    static final String VIEW_ID = "metron";

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected MetronService metron;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected ScalingService scaling;

    private UiExtensionService ui;
    private UiExtension extension;
    private boolean active;

    @Activate
    protected synchronized void activate() {
        active = true;
        registerIfBoth();
    }

    @Deactivate
    protected synchronized void deactivate() {
        unregister();
        active = false;
    }

    @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC)
    protected synchronized void bindUiExtensionService(UiExtensionService service) {
        unregister();
        ui = service;
        registerIfBoth();
    }

    protected synchronized void unbindUiExtensionService(UiExtensionService service) {
        if (ui == service) {
            unregister();
            ui = null;
        }
    }

    /** Whether the view is registered with a GUI right now. */
    synchronized boolean registered() {
        return extension != null;
    }

    private void registerIfBoth() {
        if (!active || ui == null) {
            return;
        }
        UiMessageHandlerFactory handlers = () -> ImmutableList.of(new MetronViewMessageHandler(metron, scaling));
        extension = new UiExtension.Builder(getClass().getClassLoader(),
                ImmutableList.of(new UiView(UiView.Category.NETWORK, VIEW_ID, "Metron", "nav_apps")))
                .resourcePath(VIEW_ID).messageHandlerFactory(handlers).build();
        ui.register(extension);
    }

    private void unregister() {
        if (extension != null && ui != null) {
            ui.unregister(extension);
        }
        extension = null;
    }
}
