"""ragls: a code-retrieval language server backed by Qdrant."""

__version__ = "0.1.0"
