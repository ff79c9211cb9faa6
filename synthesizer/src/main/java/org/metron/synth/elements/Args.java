package org.metron.synth.elements;

import org.metron.synth.click.Arg;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Splits an element's arguments into positional ones and {@code KEYWORD value} ones (Click convention). */
final class Args {
    final List<Arg> positional = new ArrayList<>();
    final Map<String, Arg> keywords = new LinkedHashMap<>();

    Args(List<Arg> args, java.util.Set<String> allowed) {
        for (Arg a : args) {
            String t = a.text();
            int sp = 0;
            while (sp < t.length() && !Character.isWhitespace(t.charAt(sp))) {
                sp++;
            }
            String first = t.substring(0, sp);
            if (allowed.contains(first) && sp < t.length()) {
                keywords.put(first, new Arg(t.substring(sp).trim(), a.line(), a.column() + sp + 1));
            } else {
                positional.add(a);
            }
        }
    }

    /** Words of an argument. */
    static String[] words(Arg a) {
        return a.text().trim().split("\\s+");
    }
}
