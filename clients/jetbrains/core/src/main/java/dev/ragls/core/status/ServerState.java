package dev.ragls.core.status;

/** Lifecycle of the ragls process as the client sees it. */
public enum ServerState {
    /** RAG is switched off in the settings. */
    DISABLED,
    /** No ragls executable was found (setting, PATH, project .venv). */
    NOT_FOUND,
    /** The process is being started and initialized. */
    STARTING,
    /** Initialized; index state comes from the server. */
    RUNNING,
    /** The process died; a restart is scheduled with backoff. */
    RESTARTING,
    /** The process kept crashing; automatic restarts were given up. */
    FAILED,
    /** Stopped on purpose (IDE shutdown, user action). */
    STOPPED
}
