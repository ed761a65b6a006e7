// Test-only signature stub of com.intellij.openapi.components.State from IntelliJ Platform 2024.3 (build 243); see stubs/README.md.
package com.intellij.openapi.components;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.TYPE)
public @interface State {
    String name();

    Storage[] storages() default {};
}
