package org.metron.synth.core;

import org.metron.synth.packet.Packet;

/**
 * What black-box NFs do to a concrete packet, for runs that meet one (the reference interpreter at a black-box
 * NF of the chain, the synthesized side at a {@code BlackBoxNF} of a group config). The checker gives both sides
 * the same function, so the Click parts around a box are compared for every behaviour it stands for.
 */
public interface BlackBoxes {
    /** Passes every packet unchanged. */
    BlackBoxes IDENTITY = (nf, p) -> true;

    /**
     * Runs black box {@code nf} on {@code p}, which it may change in place.
     *
     * @return false if the box drops the packet
     */
    boolean pass(String nf, Packet p);
}
