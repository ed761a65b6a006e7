// Test-only signature stub of com.intellij.util.Consumer from IntelliJ Platform 2024.3 (build 243); see stubs/README.md.
package com.intellij.util;

public interface Consumer<T> {
    void consume(T t);
}
