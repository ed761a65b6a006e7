"""The command line: `main.py` holds `main`, the `ragls` console script."""
