"""Performance benchmarks of the ragls server (`make bench`, `python -m bench.run`)."""
