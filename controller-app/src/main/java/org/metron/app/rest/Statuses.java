package org.metron.app.rest;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * The HTTP statuses a resource method answers (authentication's 401 and 403 aside). The API document
 * ({@link ApiDocument}) lists exactly these for the method's path and verb; ApiDocumentTest holds the two
 * together, so neither can change alone.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.METHOD)
public @interface Statuses {
    int[] value();
}
