// Test-only signature stub of com.intellij.execution.process.ProcessHandler from IntelliJ Platform 2024.3 (build 243); see stubs/README.md.
package com.intellij.execution.process;

public abstract class ProcessHandler {
}
