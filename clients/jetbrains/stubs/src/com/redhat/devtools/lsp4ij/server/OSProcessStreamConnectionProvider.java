// Test-only signature stub of com.redhat.devtools.lsp4ij.server.OSProcessStreamConnectionProvider from LSP4IJ 0.20.1 (the members used here are the same in 0.17.0); see stubs/README.md.
package com.redhat.devtools.lsp4ij.server;

import com.intellij.execution.configurations.GeneralCommandLine;
import com.intellij.execution.process.OSProcessHandler;
import org.jetbrains.annotations.Nullable;

import java.io.InputStream;
import java.io.OutputStream;

public class OSProcessStreamConnectionProvider implements StreamConnectionProvider {
    public OSProcessStreamConnectionProvider() {
    }

    public OSProcessStreamConnectionProvider(@Nullable GeneralCommandLine commandLine) {
    }

    public void setCommandLine(GeneralCommandLine commandLine) {
    }

    public GeneralCommandLine getCommandLine() {
        return null;
    }

    protected OSProcessHandler getProcessHandler() {
        return null;
    }

    @Override
    public void addLogErrorHandler(LanguageServerLogErrorHandler handler) {
    }

    @Override
    public void start() throws CannotStartProcessException {
    }

    @Override
    public InputStream getInputStream() {
        return null;
    }

    @Override
    public OutputStream getOutputStream() {
        return null;
    }

    @Override
    public void stop() {
    }
}
