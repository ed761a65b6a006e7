// Test-only signature stub of com.intellij.util.concurrency.AppExecutorUtil from IntelliJ Platform 2024.3 (build 243); see stubs/README.md.
package com.intellij.util.concurrency;

import org.jetbrains.annotations.NotNull;

import java.util.concurrent.ScheduledExecutorService;

public final class AppExecutorUtil {
    public static @NotNull ScheduledExecutorService getAppScheduledExecutorService() {
        return null;
    }
}
