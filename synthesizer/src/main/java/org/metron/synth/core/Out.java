package org.metron.synth.core;

/** Receives an element's symbolic branches in first-match order. */
public interface Out {
    /** Port value meaning "dropped here". */
    int DROP = -1;

    /** Emits the packets of s to output port (or {@link #DROP}). */
    void emit(int port, SymState s);
}
