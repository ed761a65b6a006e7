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
import java.util.List;
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

    private static Map<String, String> env(String path) {
        return Map.of("PATH", path, "HOME", "/nonexistent");
    }

    @Test
    void settingWinsAndIsNotSilentlyReplaced() throws IOException {
        Path custom = executable(tmp.resolve("custom/ragls"));
        Path onPath = executable(tmp.resolve("bin/ragls"));
        ServerLocator.Result r = ServerLocator.locate(custom.toString(), tmp, env(onPath.getParent().toString()), List.of(), false);
        assertEquals(custom, r.path());
        assertEquals("setting", r.source());

        ServerLocator.Result bad = ServerLocator.locate(tmp.resolve("missing").toString(), tmp, env(onPath.getParent().toString()), List.of(), false);
        assertFalse(bad.found());
        assertTrue(bad.explain().contains("is not an executable file"), bad.explain());

        ServerLocator.Result relative = ServerLocator.locate("bin/ragls", tmp, env(onPath.getParent().toString()), List.of(), false);
        assertFalse(relative.found(), "a relative setting would resolve against the IDE's working directory");
        assertTrue(relative.explain().contains("not absolute"), relative.explain());
    }

    @Test
    void pathComesFromTheGivenEnvironmentNotTheJvms() throws IOException {
        // the IDE passes its shell environment (EnvironmentUtil); a GUI-launched JVM's own PATH may lack ~/.local/bin
        Path shellOnly = executable(tmp.resolve("shell-bin/ragls"));
        String path = tmp.resolve("empty") + File.pathSeparator + shellOnly.getParent();
        ServerLocator.Result r = ServerLocator.locate("", tmp.resolve("proj"), env(path), List.of(), false);
        assertEquals(shellOnly, r.path());
        assertEquals("PATH", r.source());
        assertFalse(System.getenv().getOrDefault("PATH", "").contains(shellOnly.getParent().toString()));

        ServerLocator.Result none = ServerLocator.locate("", tmp.resolve("proj"), Map.of(), List.of(), false);
        assertFalse(none.found(), "no PATH in the given environment: nothing is found, whatever the JVM's PATH holds");
    }

    @Test
    void relativePathEntriesAreSkipped() throws IOException {
        executable(tmp.resolve("rel/ragls"));
        ServerLocator.Result r = ServerLocator.locate(null, tmp, env("rel" + File.pathSeparator + "."), List.of(), false);
        assertFalse(r.found(), r.explain());
    }

    @Test
    void windowsPathVariableIsCaseInsensitive() throws IOException {
        Path exe = executable(tmp.resolve("win/ragls.exe"));
        ServerLocator.Result r = ServerLocator.locate(null, tmp.resolve("proj"), Map.of("Path", exe.getParent().toString()), List.of(), true);
        assertEquals(exe, r.path());
    }

    @Test
    void nonExecutableFilesAreSkipped() throws IOException {
        Path plain = tmp.resolve("bin/ragls");
        Files.createDirectories(plain.getParent());
        Files.writeString(plain, "not executable");
        ServerLocator.Result r = ServerLocator.locate(null, tmp.resolve("proj"), env(plain.getParent().toString()), List.of(), false);
        assertFalse(r.found());
        assertNull(r.path());
        String why = r.explain();
        assertTrue(why.startsWith("ragls was not found."), why);
        assertTrue(why.contains("PATH"), why);
    }

    @Test
    void trustedFoldersSettingKeepsOnlyAbsolutePaths() {
        String text = "  /home/me/proj  \n\n relative/dir\n.\n/opt/other\r\n~/x\n";
        assertEquals(List.of(Path.of("/home/me/proj"), Path.of("/opt/other")), ServerLocator.parseTrustedFolders(text));
        assertEquals(List.of(), ServerLocator.parseTrustedFolders(""));
        assertEquals(List.of(), ServerLocator.parseTrustedFolders(null));
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
        assertEquals("{\"retrieval\":{\"topK\":100,\"maxChars\":0},\"indexing\":{\"autoIndex\":false}}",
                s.toServerSettings().toString());
        assertEquals(20, ClientSettings.defaults().topK());
    }
}
