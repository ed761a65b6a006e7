// Test-only signature stub of org.eclipse.lsp4j.jsonrpc.services.JsonRequest from LSP4J 1.0.0 (the LSP4J LSP4IJ 0.20.1 bundles); see stubs/README.md.
package org.eclipse.lsp4j.jsonrpc.services;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
public @interface JsonRequest {
    String value() default "";

    boolean useSegment() default true;
}
