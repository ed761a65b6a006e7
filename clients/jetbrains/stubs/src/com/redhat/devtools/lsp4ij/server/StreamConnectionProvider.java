// Test-only signature stub of com.redhat.devtools.lsp4ij.server.StreamConnectionProvider from LSP4IJ 0.20.1 (the members used here are the same in 0.17.0); see stubs/README.md.
package com.redhat.devtools.lsp4ij.server;

import com.intellij.openapi.vfs.VirtualFile;

import java.io.InputStream;
import java.io.OutputStream;

public interface StreamConnectionProvider {
    void start() throws CannotStartProcessException;

    InputStream getInputStream();

    OutputStream getOutputStream();

    default void addLogErrorHandler(LanguageServerLogErrorHandler handler) {
    }

    default Object getInitializationOptions(VirtualFile rootUri) {
        return null;
    }

    void stop();
}
