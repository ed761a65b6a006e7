// Test-only signature stub of com.intellij.execution.process.BaseOSProcessHandler from IntelliJ Platform 2024.3 (build 243); see stubs/README.md.
package com.intellij.execution.process;

public class BaseOSProcessHandler extends BaseProcessHandler<Process> {
}
