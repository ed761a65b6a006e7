"""OS and process helpers: threads, memory, the foreground process, faults, stdio framing, reading untrusted files, a folder's identity."""
