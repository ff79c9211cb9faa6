package org.metron.synth.packet;

/**
 * A frame reached an element whose Click semantics on it the model does not have (e.g. MarkIPHeader, which
 * checks nothing, on a frame without an IP header): the frame has no reference outcome.
 */
public final class OutsideModelException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public OutsideModelException(String message) {
        super(message, null, false, false);
    }
}
