package org.metron.app.scaling;

/** Milliseconds per step of one run, for the history entry (where an operation's time went). */
final class StepTimer {

    private final StringBuilder out = new StringBuilder();
    private long last = System.nanoTime();

    void lap(String step) {
        long now = System.nanoTime();
        add(step, (now - last) / 1_000_000);
        last = now;
    }

    /** A step timed elsewhere (before this run started). */
    void add(String step, long ms) {
        out.append(out.length() > 0 ? ", " : "").append(step).append(' ').append(ms);
    }

    /** A detail of the last step, in parentheses after its time. */
    void note(String detail) {
        out.append(" (").append(detail).append(')');
    }

    @Override
    public String toString() {
        return out.toString();
    }
}
