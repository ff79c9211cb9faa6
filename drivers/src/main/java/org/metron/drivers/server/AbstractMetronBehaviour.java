package org.metron.drivers.server;

import org.metron.drivers.agent.AgentClient;
import org.metron.drivers.agent.AgentException;
import org.onosproject.net.DeviceId;
import org.onosproject.net.driver.AbstractHandlerBehaviour;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/** Common plumbing of the metron-server behaviours: this device's agent client, and waiting on it. */
public abstract class AbstractMetronBehaviour extends AbstractHandlerBehaviour {

    protected DeviceId deviceId() {
        return handler().data().deviceId();
    }

    protected AgentClient agent() {
        return handler().get(AgentClientService.class).client(deviceId());
    }

    /**
     * Waits for an agent call. Never hangs: every call carries a deadline.
     *
     * @throws AgentException the call's failure
     */
    protected static <T> T await(CompletableFuture<T> call) {
        try {
            return call.join();
        } catch (CompletionException e) {
            if (e.getCause() instanceof AgentException) {
                throw (AgentException) e.getCause();
            }
            throw e;
        }
    }
}
