"""Builds CodeSearchNet-style golden sets for `ragls eval` from pinned registry packages."""
