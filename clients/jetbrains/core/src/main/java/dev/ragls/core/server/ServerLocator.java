package dev.ragls.core.server;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Finds the {@code ragls} executable. The project is untrusted input (docs/security.md), so a
 * program inside it is never chosen on its own: the order is
 * <ol>
 *   <li>the configured path (IDE-level setting), exactly as given, and nothing else if it is set;</li>
 *   <li>the project's own virtualenv ({@code .venv/bin/ragls}, {@code .venv\Scripts\ragls.exe}),
 *       only when the user listed the project folder under the IDE-level trusted folders;</li>
 *   <li>{@code ragls} on {@code PATH}, taken from the environment the caller passes in (the IDE
 *       passes its shell environment, the one the process is launched with). Relative {@code PATH}
 *       entries are skipped: they would resolve against whatever directory the IDE runs in.</li>
 * </ol>
 * Pure file checks: call it off the UI thread.
 */
public final class ServerLocator {
    public static final String SOURCE_SETTING = "setting";
    public static final String SOURCE_TRUSTED_VENV = "trusted project .venv";
    public static final String SOURCE_PATH = "PATH";

    /** Where ragls was found (or not), every place that was looked at, and a hint for the user. */
    public record Result(Path path, String source, List<String> checked, String problem) {
        public boolean found() {
            return path != null;
        }

        /** One-paragraph explanation for a "not found" notification. */
        public String explain() {
            if (found()) {
                return "Using " + path + " (" + source + ").";
            }
            StringBuilder sb = new StringBuilder(problem == null ? "ragls was not found." : problem);
            if (!checked.isEmpty()) {
                sb.append(" Looked in: ").append(String.join(", ", checked)).append('.');
            }
            return sb.toString();
        }
    }

    private ServerLocator() {
    }

    /** With the platform's conventions (Windows names and separators when running on Windows). */
    public static Result locate(String configuredPath, Path projectRoot, Map<String, String> environment,
                                Collection<Path> trustedFolders) {
        return locate(configuredPath, projectRoot, environment, trustedFolders,
                System.getProperty("os.name", "").toLowerCase(Locale.ROOT).startsWith("windows"));
    }

    public static Result locate(String configuredPath, Path projectRoot, Map<String, String> environment,
                                Collection<Path> trustedFolders, boolean windows) {
        List<String> checked = new ArrayList<>();
        if (configuredPath != null && !configuredPath.isBlank()) {
            return configured(configuredPath.strip(), checked);
        }
        List<String> names = windows ? List.of("ragls.exe", "ragls.cmd", "ragls.bat", "ragls") : List.of("ragls");
        Path venvHit = projectRoot == null ? null : findInVenv(projectRoot, names, windows);
        if (venvHit != null && isTrusted(projectRoot, trustedFolders)) {
            checked.add(venvHit + " (trusted folder)");
            return new Result(venvHit, SOURCE_TRUSTED_VENV, checked, null);
        }
        String pathEnv = pathVariable(environment, windows);
        if (pathEnv != null && !pathEnv.isEmpty()) {
            checked.add("PATH");
            for (String dir : pathEnv.split(windows ? ";" : ":")) {
                Path hit = findIn(dir, names);
                if (hit != null) {
                    return new Result(hit, SOURCE_PATH, checked, null);
                }
            }
        }
        String problem = "ragls was not found.";
        if (venvHit != null) {
            problem += " The project contains " + venvHit + ", which is not started because programs inside a "
                    + "project are untrusted: set it as the server path, or add the project folder to the trusted "
                    + "folders (Settings | Tools | ragls).";
        }
        return new Result(null, null, checked, problem);
    }

    private static Result configured(String configuredPath, List<String> checked) {
        String p = expandHome(configuredPath);
        checked.add(p + " (setting)");
        try {
            Path candidate = Path.of(p);
            if (!candidate.isAbsolute()) {
                return new Result(null, null, checked, "The configured ragls path '" + configuredPath
                        + "' is not absolute.");
            }
            if (isExecutable(candidate)) {
                return new Result(candidate, SOURCE_SETTING, checked, null);
            }
        } catch (InvalidPathException ignored) {
            // reported below
        }
        return new Result(null, null, checked, "The configured ragls path '" + configuredPath
                + "' is not an executable file.");
    }

    private static Path findInVenv(Path projectRoot, List<String> names, boolean windows) {
        Path dir = projectRoot.resolve(".venv").resolve(windows ? "Scripts" : "bin");
        for (String name : names) {
            Path candidate = dir.resolve(name);
            if (isExecutable(candidate)) {
                return candidate.toAbsolutePath();
            }
        }
        return null;
    }

    private static Path findIn(String dir, List<String> names) {
        if (dir.isEmpty()) {
            return null;
        }
        try {
            Path base = Path.of(dir);
            if (!base.isAbsolute()) {
                return null;
            }
            for (String name : names) {
                Path candidate = base.resolve(name);
                if (isExecutable(candidate)) {
                    return candidate;
                }
            }
        } catch (InvalidPathException ignored) {
            // skip odd PATH entries
        }
        return null;
    }

    /**
     * The trusted-folders setting (one absolute path per line) as paths; blank lines, relative and
     * malformed entries are dropped, so nothing vague ever becomes trusted.
     */
    public static List<Path> parseTrustedFolders(String text) {
        List<Path> out = new ArrayList<>();
        if (text == null) {
            return out;
        }
        for (String line : text.split("\\R")) {
            String t = line.strip();
            if (t.isEmpty()) {
                continue;
            }
            try {
                Path p = Path.of(t);
                if (p.isAbsolute()) {
                    out.add(p);
                }
            } catch (InvalidPathException ignored) {
                // dropped
            }
        }
        return out;
    }

    /** True when {@code projectRoot} is one of the trusted folders (same real path), not merely inside one. */
    static boolean isTrusted(Path projectRoot, Collection<Path> trustedFolders) {
        if (trustedFolders == null || trustedFolders.isEmpty()) {
            return false;
        }
        Path root = realPath(projectRoot);
        for (Path t : trustedFolders) {
            if (t != null && t.isAbsolute() && realPath(t).equals(root)) {
                return true;
            }
        }
        return false;
    }

    private static Path realPath(Path p) {
        try {
            return p.toRealPath();
        } catch (IOException e) {
            return p.toAbsolutePath().normalize();
        }
    }

    /** {@code PATH}; on Windows the variable's name is case-insensitive ({@code Path}). */
    static String pathVariable(Map<String, String> environment, boolean windows) {
        if (environment == null) {
            return null;
        }
        String v = environment.get("PATH");
        if (v != null || !windows) {
            return v;
        }
        for (Map.Entry<String, String> e : environment.entrySet()) {
            if (e.getKey().equalsIgnoreCase("PATH")) {
                return e.getValue();
            }
        }
        return null;
    }

    private static boolean isExecutable(Path p) {
        return Files.isRegularFile(p) && Files.isExecutable(p);
    }

    private static String expandHome(String p) {
        if (p.equals("~") || p.startsWith("~/")) {
            return System.getProperty("user.home") + p.substring(1);
        }
        return p;
    }
}
