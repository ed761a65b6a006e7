"""The workspace's git history, read as data."""
