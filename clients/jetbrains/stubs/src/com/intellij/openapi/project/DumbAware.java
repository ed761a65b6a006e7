// Test-only signature stub of com.intellij.openapi.project.DumbAware from IntelliJ Platform 2024.3 (build 243); see stubs/README.md.
package com.intellij.openapi.project;

public interface DumbAware {
}
