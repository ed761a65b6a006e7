import os
import sys

# `python -m ragls` put the current directory first on the import path, and it is often the
# workspace (an agent starts `python -m ragls mcp` in its project): no file of it may be imported,
# here or in the worker processes, which start with this path.
if sys.path and sys.path[0] and os.path.abspath(sys.path[0]) == os.getcwd():
    del sys.path[0]

from ragls.frontends.cli.main import main

raise SystemExit(main())
