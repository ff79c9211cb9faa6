package org.metron.app.gui;

import org.junit.Test;
import org.onosproject.ui.UiExtension;
import org.onosproject.ui.UiExtensionService;
import org.onosproject.ui.lion.LionBundle;

import java.util.ArrayList;
import java.util.List;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

/**
 * The view follows the GUI: the component activates without one (ONOS 2.7 runs gui2 by default, which offers no
 * legacy {@link UiExtensionService}), registers the view when a GUI appears and takes it back when it goes.
 */
public class MetronUiComponentTest {

    /** A GUI's extension registry, recording what is registered. */
    private static final class RecordingGui implements UiExtensionService {
        final List<UiExtension> extensions = new ArrayList<>();

        @Override
        public void register(UiExtension extension) {
            extensions.add(extension);
        }

        @Override
        public void unregister(UiExtension extension) {
            extensions.remove(extension);
        }

        @Override
        public List<UiExtension> getExtensions() {
            return extensions;
        }

        @Override
        public UiExtension getViewExtension(String viewId) {
            return extensions.stream().filter(e -> e.views().stream().anyMatch(v -> v.id().equals(viewId)))
                    .findFirst().orElse(null);
        }

        @Override
        public LionBundle getNavLionBundle() {
            return null;
        }

        @Override
        public void refreshModel() {
        }
    }

    @Test
    public void activatesWithoutAGuiAndRegistersTheViewWhenOneComesAndGoes() {
        MetronUiComponent c = new MetronUiComponent();
        c.activate();
        assertFalse("no GUI: nothing registered", c.registered());

        RecordingGui gui = new RecordingGui();
        c.bindUiExtensionService(gui);
        assertTrue(c.registered());
        assertEquals(1, gui.extensions.size());
        assertEquals("Metron", gui.getViewExtension(MetronUiComponent.VIEW_ID).views().get(0).label());

        c.unbindUiExtensionService(gui);
        assertFalse(c.registered());
        assertTrue("the view is taken back from the GUI that went", gui.extensions.isEmpty());

        RecordingGui second = new RecordingGui();
        c.bindUiExtensionService(second);
        assertEquals(1, second.extensions.size());
        c.deactivate();
        assertTrue(second.extensions.isEmpty());
    }

    @Test
    public void aGuiPresentBeforeActivationGetsTheViewAtActivation() {
        MetronUiComponent c = new MetronUiComponent();
        RecordingGui gui = new RecordingGui();
        c.bindUiExtensionService(gui);
        assertTrue("not active yet", gui.extensions.isEmpty());
        c.activate();
        assertEquals(1, gui.extensions.size());
    }
}
