package dev.ragls.core.server;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Finds the {@code ragls} executable: the configured path if one is set, else the first
 * {@code ragls} on {@code PATH}, else the project's own virtualenv ({@code .venv/bin/ragls},
 * {@code .venv\Scripts\ragls.exe} on Windows).
 */
public final class ServerLocator {

    /** Where ragls was found (or not), and every place that was looked at. */
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

    public static Result locate(String configuredPath, Path projectRoot) {
        return locate(configuredPath, projectRoot, System.getenv("PATH"),
                System.getProperty("os.name", "").toLowerCase().startsWith("windows"));
    }

    public static Result locate(String configuredPath, Path projectRoot, String pathEnv, boolean windows) {
        List<String> checked = new ArrayList<>();
        if (configuredPath != null && !configuredPath.isBlank()) {
            String p = expandHome(configuredPath.strip());
            checked.add(p + " (setting)");
            try {
                Path candidate = Path.of(p);
                if (isExecutable(candidate)) {
                    return new Result(candidate.toAbsolutePath(), "setting", checked, null);
                }
            } catch (InvalidPathException ignored) {
                // reported below
            }
            return new Result(null, null, checked, "The configured ragls path '" + configuredPath
                    + "' is not an executable file.");
        }
        List<String> names = windows ? List.of("ragls.exe", "ragls.cmd", "ragls.bat", "ragls") : List.of("ragls");
        if (pathEnv != null && !pathEnv.isEmpty()) {
            checked.add("PATH");
            for (String dir : pathEnv.split(windows ? ";" : File.pathSeparator)) {
                if (dir.isEmpty()) {
                    continue;
                }
                for (String name : names) {
                    try {
                        Path candidate = Path.of(dir, name);
                        if (isExecutable(candidate)) {
                            return new Result(candidate.toAbsolutePath(), "PATH", checked, null);
                        }
                    } catch (InvalidPathException ignored) {
                        // skip odd PATH entries
                    }
                }
            }
        }
        if (projectRoot != null) {
            Path venv = windows ? projectRoot.resolve(".venv").resolve("Scripts")
                    : projectRoot.resolve(".venv").resolve("bin");
            for (String name : names) {
                Path candidate = venv.resolve(name);
                if (name.equals(names.get(0))) {
                    checked.add(candidate.toString());
                }
                if (isExecutable(candidate)) {
                    return new Result(candidate.toAbsolutePath(), "project .venv", checked, null);
                }
            }
        }
        return new Result(null, null, checked, "ragls was not found.");
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
