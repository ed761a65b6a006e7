package dev.ragls.core;

import dev.ragls.core.server.ServerLocator;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 12: a repository that ships an executable {@code .venv/bin/ragls} must not get it run just by
 * being opened. Real files, real processes: whatever the locator picks is started, and a marker
 * file shows whether the project's script ran.
 */
class ProjectBinaryTrustTest {
    @TempDir
    Path tmp;
    private Path project;
    private Path hostile;
    private Path marker;
    private Path userRagls;
    private Path userMarker;

    private static Path script(Path p, Path writes) throws IOException {
        Files.createDirectories(p.getParent());
        Files.writeString(p, "#!/bin/sh\necho ran > '" + writes + "'\n");
        assertTrue(p.toFile().setExecutable(true));
        return p;
    }

    @BeforeEach
    void setUp() throws IOException {
        project = Files.createDirectories(tmp.resolve("cloned-repo"));
        marker = tmp.resolve("project-script-ran");
        hostile = script(project.resolve(".venv/bin/ragls"), marker);
        userMarker = tmp.resolve("user-ragls-ran");
        userRagls = script(tmp.resolve("home/.local/bin/ragls"), userMarker);
    }

    /** Starts what the locator chose, as the plugin would, and waits for it. */
    private static void run(ServerLocator.Result r) throws Exception {
        Process p = new ProcessBuilder(r.path().toString()).redirectErrorStream(true).start();
        assertTrue(p.waitFor(20, TimeUnit.SECONDS));
        assertEquals(0, p.exitValue());
    }

    @Test
    void theProjectsVenvIsNeverChosenOnItsOwn() throws Exception {
        // nothing on PATH: not found, and the message says why the project's copy was not used
        ServerLocator.Result none = ServerLocator.locate("", project, Map.of("PATH", tmp.resolve("empty").toString()), List.of(), false);
        assertFalse(none.found(), none.explain());
        assertTrue(none.explain().contains("untrusted"), none.explain());
        assertTrue(none.explain().contains(hostile.toString()), none.explain());

        // ragls on the user's PATH is chosen and runs; the project's script does not
        ServerLocator.Result r = ServerLocator.locate(null, project, Map.of("PATH", userRagls.getParent().toString()), List.of(), false);
        assertEquals(userRagls, r.path());
        run(r);
        assertTrue(Files.exists(userMarker));
        assertFalse(Files.exists(marker), "the project's .venv/bin/ragls ran");

        // the project's bin directory on PATH only counts when it is absolute (a relative entry is skipped)
        ServerLocator.Result rel = ServerLocator.locate(null, project, Map.of("PATH", ".venv/bin"), List.of(), false);
        assertFalse(rel.found());

        // trusting another folder, or a parent of the project, does not trust the project
        ServerLocator.Result other = ServerLocator.locate(null, project, Map.of("PATH", ""), List.of(tmp, tmp.resolve("home")), false);
        assertFalse(other.found(), other.explain());
        assertFalse(Files.exists(marker));
    }

    @Test
    void theExactConfiguredPathRuns() throws Exception {
        ServerLocator.Result r = ServerLocator.locate(hostile.toString(), project, Map.of("PATH", userRagls.getParent().toString()), List.of(), false);
        assertEquals(hostile, r.path());
        assertEquals(ServerLocator.SOURCE_SETTING, r.source());
        run(r);
        assertTrue(Files.exists(marker), "the configured path was not run");
        assertFalse(Files.exists(userMarker));
    }

    @Test
    void aTrustedFolderMayUseItsVenv() throws Exception {
        ServerLocator.Result r = ServerLocator.locate(null, project, Map.of("PATH", userRagls.getParent().toString()),
                List.of(project.resolve("..").resolve(project.getFileName())), false);
        assertEquals(hostile, r.path());
        assertEquals(ServerLocator.SOURCE_TRUSTED_VENV, r.source());
        run(r);
        assertTrue(Files.exists(marker));

        // a symlink that points at a trusted folder is the same folder; a different folder is not
        Path link = tmp.resolve("link-to-repo");
        Files.createSymbolicLink(link, project);
        assertEquals(ServerLocator.SOURCE_TRUSTED_VENV,
                ServerLocator.locate(null, link, Map.of("PATH", ""), List.of(project), false).source());
        Path twin = Files.createDirectories(tmp.resolve("twin"));
        script(twin.resolve(".venv/bin/ragls"), tmp.resolve("twin-ran"));
        assertNotEquals(ServerLocator.SOURCE_TRUSTED_VENV,
                ServerLocator.locate(null, twin, Map.of("PATH", ""), List.of(project), false).source());
    }
}
