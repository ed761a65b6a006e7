// Test-only signature stub of com.intellij.openapi.project.DumbAwareAction from IntelliJ Platform 2024.3 (build 243); see stubs/README.md.
package com.intellij.openapi.project;

import com.intellij.openapi.actionSystem.AnAction;

public abstract class DumbAwareAction extends AnAction implements DumbAware {
    protected DumbAwareAction() {
    }
}
