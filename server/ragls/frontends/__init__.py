"""The front ends: each turns its protocol into calls of one `WorkspaceIndex` (workspace/index.py)
and holds no pipeline logic.

- `lsp/`: the language server (`ragls`, `rag/*` over stdio) and its progress reports.
- `mcp/`: `ragls mcp`, the MCP server: its tools' schemas and their text.
- `cli/`: the `ragls` command line (`index`, `search`, `status`, ...), which also starts the other two.
"""
