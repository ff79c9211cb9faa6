package org.metron.standin.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.karaf.shell.api.action.Action;
import org.apache.karaf.shell.api.action.Argument;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;
import org.onosproject.ui.UiExtension;
import org.onosproject.ui.UiExtensionService;

/** Sends one request event to a registered view's message handlers, as the GUI would, and prints the replies. */
@Service
@Command(scope = "standin", name = "gui-request",
        description = "Sends a request event to a GUI view's message handlers and prints the replies (JSON)")
public class GuiRequestCommand implements Action {
    @Reference(optional = true)
    private UiExtensionService gui;

    @Argument(index = 0, name = "view", description = "view id", required = true)
    private String view;

    @Argument(index = 1, name = "event", description = "request event, e.g. xDataRequest", required = true)
    private String event;

    @Argument(index = 2, name = "payload", description = "JSON payload (default {})")
    private String payload = "{}";

    @Override
    public Object execute() throws Exception {
        UiExtension ext = gui == null ? null : gui.getViewExtension(view);
        if (ext == null) {
            System.out.println("error: no GUI view " + view + (gui == null ? " (GUI stand-in not enabled)" : ""));
            return null;
        }
        GuiSession session = new GuiSession(ext);
        try {
            for (ObjectNode reply : session.request(event, (ObjectNode) new ObjectMapper().readTree(payload))) {
                System.out.println(reply);
            }
        } finally {
            session.close();
        }
        return null;
    }
}
