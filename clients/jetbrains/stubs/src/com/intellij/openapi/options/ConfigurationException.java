// Test-only signature stub of com.intellij.openapi.options.ConfigurationException from IntelliJ Platform 2024.3 (build 243); see stubs/README.md.
package com.intellij.openapi.options;

public class ConfigurationException extends Exception {
}
