"""The MCP front end: `server.py` (`ragls mcp`), `tools.py` (the tools' arguments, results and
schemas), `text.py` (the tools' text)."""
