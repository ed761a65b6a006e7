// Test-only signature stub of com.intellij.openapi.ui.InputValidator from IntelliJ Platform 2024.3 (build 243); see stubs/README.md.
package com.intellij.openapi.ui;

public interface InputValidator {
    boolean checkInput(String inputString);

    boolean canClose(String inputString);
}
