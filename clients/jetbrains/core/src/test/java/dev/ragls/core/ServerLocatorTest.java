package dev.ragls.core;

import dev.ragls.core.server.Backoff;
import dev.ragls.core.server.ClientSettings;
import dev.ragls.core.server.ServerLocator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ServerLocatorTest {
    @TempDir
    Path tmp;

    private Path executable(Path p) throws IOException {
        Files.createDirectories(p.getParent());
        Files.writeString(p, "#!/bin/sh\n");
        assertTrue(p.toFile().setExecutable(true));
        return p;
    }

    @Test
    void settingWinsAndIsNotSilentlyReplaced() throws IOException {
        Path custom = executable(tmp.resolve("custom/ragls"));
        Path onPath = executable(tmp.resolve("bin/ragls"));
        ServerLocator.Result r = ServerLocator.locate(custom.toString(), tmp, onPath.getParent().toString(), false);
        assertEquals(custom, r.path());
        assertEquals("setting", r.source());

        ServerLocator.Result bad = ServerLocator.locate(tmp.resolve("missing").toString(), tmp, onPath.getParent().toString(), false);
        assertFalse(bad.found());
        assertTrue(bad.explain().contains("is not an executable file"), bad.explain());
    }

    @Test
    void pathBeforeProjectVenv() throws IOException {
        Path venv = executable(tmp.resolve("proj/.venv/bin/ragls"));
        Path onPath = executable(tmp.resolve("bin/ragls"));
        String path = tmp.resolve("empty") + File.pathSeparator + onPath.getParent();
        ServerLocator.Result r = ServerLocator.locate("", tmp.resolve("proj"), path, false);
        assertEquals(onPath, r.path());
        assertEquals("PATH", r.source());

        ServerLocator.Result v = ServerLocator.locate(null, tmp.resolve("proj"), tmp.resolve("empty").toString(), false);
        assertEquals(venv, v.path());
        assertEquals("project .venv", v.source());
    }

    @Test
    void nonExecutableFilesAreSkipped() throws IOException {
        Path plain = tmp.resolve("bin/ragls");
        Files.createDirectories(plain.getParent());
        Files.writeString(plain, "not executable");
        ServerLocator.Result r = ServerLocator.locate(null, tmp.resolve("proj"), plain.getParent().toString(), false);
        assertFalse(r.found());
        assertNull(r.path());
        String why = r.explain();
        assertTrue(why.startsWith("ragls was not found."), why);
        assertTrue(why.contains("PATH"), why);
        assertTrue(why.contains(".venv"), why);
    }

    @Test
    void windowsLayout() throws IOException {
        Path exe = executable(tmp.resolve("proj/.venv/Scripts/ragls.exe"));
        ServerLocator.Result r = ServerLocator.locate(null, tmp.resolve("proj"), "", true);
        assertEquals(exe, r.path());
    }

    @Test
    void backoffGrowsCapsAndGivesUp() {
        Backoff b = new Backoff(Duration.ofSeconds(1), Duration.ofSeconds(5), 2.0, 4, Duration.ofMinutes(1));
        assertEquals(Duration.ofSeconds(1), b.onCrash(Duration.ofSeconds(1)));
        assertEquals(Duration.ofSeconds(2), b.onCrash(Duration.ofSeconds(1)));
        assertEquals(Duration.ofSeconds(4), b.onCrash(Duration.ofSeconds(1)));
        assertEquals(Duration.ofSeconds(5), b.onCrash(Duration.ofSeconds(1)));
        assertNull(b.onCrash(Duration.ofSeconds(1)), "gives up after maxAttempts");
        assertEquals(5, b.attempts());
        assertEquals(Duration.ofSeconds(1), b.onCrash(Duration.ofMinutes(3)), "a long-lived process resets the count");
        b.reset();
        assertEquals(0, b.attempts());
        assertThrows(IllegalArgumentException.class, () -> new Backoff(Duration.ofSeconds(2), Duration.ofSeconds(1), 2, 3, Duration.ZERO));
        assertEquals(Duration.ofSeconds(1), Backoff.defaults().onCrash(Duration.ZERO));
    }

    @Test
    void clientSettingsWireForm() {
        ClientSettings s = new ClientSettings(true, 500, -3, false);
        assertEquals(100, s.topK());
        assertEquals(0, s.maxChars());
        assertEquals(Map.of("retrieval", Map.of("topK", 100, "maxChars", 0), "indexing", Map.of("autoIndex", false)),
                s.toServerSettings());
        assertEquals(5, ClientSettings.defaults().topK());
    }
}
