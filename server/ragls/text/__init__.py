"""Facts about text and paths that every layer shares: languages, the code tokenizer, BM25, escaping, path kinds."""
