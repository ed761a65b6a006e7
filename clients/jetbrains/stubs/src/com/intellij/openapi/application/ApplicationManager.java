// Test-only signature stub of com.intellij.openapi.application.ApplicationManager from IntelliJ Platform 2024.3 (build 243); see stubs/README.md.
package com.intellij.openapi.application;

public class ApplicationManager {
    public static Application getApplication() {
        return null;
    }
}
