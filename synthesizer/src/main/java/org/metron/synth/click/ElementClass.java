package org.metron.synth.click;

import java.util.List;
import java.util.Map;

/**
 * An {@code elementclass} definition: its body as a source range (re-read per instance, so every position stays
 * exact), its formal parameters, and the compounds in scope where it was defined (itself included).
 */
final class ElementClass {
    final String name;
    final int bodyStart;
    final int bodyEnd;
    final List<String> formals;
    final Map<String, ElementClass> scope;

    ElementClass(String name, int bodyStart, int bodyEnd, List<String> formals, Map<String, ElementClass> scope) {
        this.name = name;
        this.bodyStart = bodyStart;
        this.bodyEnd = bodyEnd;
        this.formals = formals;
        this.scope = scope;
    }
}
