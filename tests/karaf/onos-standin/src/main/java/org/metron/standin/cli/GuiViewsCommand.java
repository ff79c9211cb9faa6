package org.metron.standin.cli;

import org.apache.karaf.shell.api.action.Action;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;
import org.onosproject.ui.UiExtension;
import org.onosproject.ui.UiExtensionService;
import org.onosproject.ui.UiMessageHandler;
import org.onosproject.ui.UiView;

import java.io.IOException;
import java.io.InputStream;
import java.util.TreeSet;

/**
 * Lists the GUI views registered with the stand-in UiExtensionService: id, label, category, whether the view's
 * html/js/css and the extension's css/js includes load from the registering bundle, and the request events its
 * message handlers take once initialised.
 */
@Service
@Command(scope = "standin", name = "gui-views", description = "Lists GUI views registered with the stand-in GUI")
public class GuiViewsCommand implements Action {
    @Reference(optional = true)
    private UiExtensionService gui;

    private static boolean loads(InputStream in) throws IOException {
        if (in == null) {
            return false;
        }
        try (in) {
            return in.read() >= 0;
        }
    }

    @Override
    public Object execute() throws Exception {
        if (gui == null) {
            System.out.println("error: no UiExtensionService (the GUI stand-in is not enabled)");
            return null;
        }
        for (UiExtension ext : gui.getExtensions()) {
            GuiSession session = new GuiSession(ext);
            TreeSet<String> events = new TreeSet<>();
            for (UiMessageHandler h : session.handlers()) {
                events.addAll(h.messageTypes());
            }
            session.close();
            for (UiView v : ext.views()) {
                System.out.printf("view=%s label=%s category=%s html=%s js=%s css=%s includes=%s events=%s%n",
                                  v.id(), v.label(), v.category(),
                                  loads(ext.resource(v.id(), v.id() + ".html")),
                                  loads(ext.resource(v.id(), v.id() + ".js")),
                                  loads(ext.resource(v.id(), v.id() + ".css")),
                                  loads(ext.css()) && loads(ext.js()), String.join(",", events));
            }
        }
        return null;
    }
}
