package dev.ragls.intellij;

import com.intellij.openapi.application.PathManager;
import com.intellij.openapi.project.Project;
import org.jetbrains.annotations.NotNull;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * Per-project log of the ragls process (its stderr plus lifecycle events) in the IDE log folder,
 * {@code <log dir>/ragls/<project>-<hash>.log}; kept under 5 MB by starting over.
 */
final class RaglsLog {
    private static final long MAX_BYTES = 5L * 1024 * 1024;
    private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss");

    private final Path file;
    private final ExecutorService writer = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "ragls-log");
        t.setDaemon(true);
        return t;
    });

    RaglsLog(@NotNull Project project) {
        String name = project.getName().replaceAll("[^A-Za-z0-9._-]", "_");
        String hash = Integer.toHexString(String.valueOf(project.getBasePath()).hashCode());
        this.file = Path.of(PathManager.getLogPath(), "ragls", name + "-" + hash + ".log");
    }

    Path file() {
        return file;
    }

    void append(String text) {
        String stamp = LocalDateTime.now().format(TIME);
        StringBuilder sb = new StringBuilder();
        for (String line : text.split("\\R")) {
            if (!line.isEmpty()) {
                sb.append(stamp).append(' ').append(line).append('\n');
            }
        }
        if (sb.length() == 0) {
            return;
        }
        writer.execute(() -> {
            try {
                Files.createDirectories(file.getParent());
                boolean tooBig = Files.exists(file) && Files.size(file) > MAX_BYTES;
                Files.writeString(file, sb, StandardCharsets.UTF_8, StandardOpenOption.CREATE,
                        tooBig ? StandardOpenOption.TRUNCATE_EXISTING : StandardOpenOption.APPEND);
            } catch (IOException ignored) {
                // logging must never break the plugin
            }
        });
    }

    void close() {
        writer.shutdown();
    }
}
