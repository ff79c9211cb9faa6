package org.metron.openflow;

/** A switch refused a request, did not answer in time, or is not connected; the message names the switch. */
public class OpenFlowException extends RuntimeException {
    public OpenFlowException(String message) {
        super(message);
    }

    public OpenFlowException(String message, Throwable cause) {
        super(message, cause);
    }
}
