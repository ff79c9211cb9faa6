package org.metron.standin.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.onlab.osgi.DefaultServiceDirectory;
import org.onosproject.ui.UiConnection;
import org.onosproject.ui.UiExtension;
import org.onosproject.ui.UiMessageHandler;
import org.onosproject.ui.model.topo.UiTopoLayout;

import java.util.ArrayList;
import java.util.List;

/**
 * One GUI session against an extension, as the legacy GUI's web socket runs it: the extension's message handlers,
 * initialised with a connection that records what they send, and the services of the OSGi registry.
 */
final class GuiSession implements UiConnection {
    private static final ObjectMapper MAPPER = new ObjectMapper();
    private final List<ObjectNode> sent = new ArrayList<>();
    private final List<UiMessageHandler> handlers = new ArrayList<>();
    private String view;

    GuiSession(UiExtension extension) {
        if (extension.messageHandlerFactory() != null) {
            handlers.addAll(extension.messageHandlerFactory().newHandlers());
        }
        handlers.forEach(h -> h.init(this, new DefaultServiceDirectory()));
    }

    List<UiMessageHandler> handlers() {
        return handlers;
    }

    /** Sends one request event to the handler that takes it; returns what the handlers sent back. */
    List<ObjectNode> request(String event, ObjectNode payload) {
        sent.clear();
        ObjectNode message = MAPPER.createObjectNode();
        message.put("event", event);
        message.set("payload", payload);
        for (UiMessageHandler h : handlers) {
            if (h.messageTypes().contains(event)) {
                h.process(message);
                return new ArrayList<>(sent);
            }
        }
        throw new IllegalArgumentException("no message handler of the extension takes " + event);
    }

    void close() {
        handlers.forEach(UiMessageHandler::destroy);
    }

    @Override
    public String userName() {
        return "onos";
    }

    @Override
    public UiTopoLayout currentLayout() {
        return null;
    }

    @Override
    public void setCurrentLayout(UiTopoLayout layout) {
    }

    @Override
    public String currentView() {
        return view;
    }

    @Override
    public void setCurrentView(String viewId) {
        view = viewId;
    }

    @Override
    public synchronized void sendMessage(ObjectNode message) {
        sent.add(message);
    }

    @Override
    public void sendMessage(String type, ObjectNode payload) {
        ObjectNode message = MAPPER.createObjectNode();
        message.put("event", type);
        message.set("payload", payload);
        sendMessage(message);
    }
}
