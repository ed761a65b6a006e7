// Test-only signature stub of com.intellij.execution.process.OSProcessHandler from IntelliJ Platform 2024.3 (build 243); see stubs/README.md.
package com.intellij.execution.process;

public class OSProcessHandler extends BaseOSProcessHandler {
}
