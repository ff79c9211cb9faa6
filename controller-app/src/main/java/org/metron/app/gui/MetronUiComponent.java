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

/** Registers the "Metron" view in the ONOS GUI's Network category. */
@Component(immediate = true)
public class MetronUiComponent {
    static final String VIEW_ID = "metron";

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected UiExtensionService uiExtensionService;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected MetronService metron;

    @Reference(cardinality = ReferenceCardinality.MANDATORY)
    protected ScalingService scaling;

    private UiExtension extension;

    @Activate
    protected void activate() {
        UiMessageHandlerFactory handlers = () -> ImmutableList.of(new MetronViewMessageHandler(metron, scaling));
        extension = new UiExtension.Builder(getClass().getClassLoader(),
                ImmutableList.of(new UiView(UiView.Category.NETWORK, VIEW_ID, "Metron", "nav_apps")))
                .resourcePath(VIEW_ID).messageHandlerFactory(handlers).build();
        uiExtensionService.register(extension);
    }

    @Deactivate
    protected void deactivate() {
        uiExtensionService.unregister(extension);
    }
}
