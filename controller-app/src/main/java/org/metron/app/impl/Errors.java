package org.metron.app.impl;

import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;

/** Unwraps future failures into the message an operator should read. */
final class Errors {
    private Errors() {
    }

    static String message(Throwable t) {
        Throwable c = t;
        while ((c instanceof ExecutionException || c instanceof CompletionException) && c.getCause() != null) {
            c = c.getCause();
        }
        if (c instanceof TimeoutException) {
            return "no answer in time";
        }
        return c.getMessage() == null ? c.getClass().getSimpleName() : c.getMessage();
    }
}
