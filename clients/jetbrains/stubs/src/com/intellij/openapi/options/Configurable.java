// Test-only signature stub of com.intellij.openapi.options.Configurable from IntelliJ Platform 2024.3 (build 243); see stubs/README.md.
package com.intellij.openapi.options;

import org.jetbrains.annotations.Nls;

public interface Configurable extends UnnamedConfigurable {
    @Nls(capitalization = Nls.Capitalization.Title)
    String getDisplayName();
}
