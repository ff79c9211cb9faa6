package org.metron.app.store;

/**
 * The one {@link ChainStore} of this controller instance. Its per-chain monitors and reservation lock are
 * node-local objects, not map contents: two ChainStore objects over the same maps would let a split interleave
 * with a remove of the same chain and two reservations claim the same core. So every component that changes
 * chains (lifecycle, recovery, scaling) takes this one instead of building its own.
 */
public interface ChainStoreService {
    ChainStore chainStore();
}
