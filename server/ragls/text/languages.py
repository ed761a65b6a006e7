"""Which files ragls understands, and how to name them: extension -> language."""

from __future__ import annotations

import re

# Languages chunked along the syntax tree (tree-sitter-language-pack grammar names).
CODE_EXTENSIONS: dict[str, str] = {
    ".py": "python",
    ".pyi": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".kt": "kotlin",
    ".kts": "kotlin",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".hpp": "cpp",
    ".hh": "cpp",
    ".hxx": "cpp",
    # Inline/template implementation files included by C++ headers.
    ".inl": "cpp",
    ".ipp": "cpp",
    ".tpp": "cpp",
    ".txx": "cpp",
    ".cs": "csharp",
    ".rb": "ruby",
    # Ruby by another name: Rake tasks, gem specifications, Rack configurations.
    ".rake": "ruby",
    ".gemspec": "ruby",
    ".ru": "ruby",
    ".php": "php",
}

MARKDOWN_EXTENSIONS = {".md": "markdown", ".markdown": "markdown", ".mdx": "markdown"}

# Plain text split into line windows.
TEXT_EXTENSIONS: dict[str, str] = {
    ".txt": "text",
    ".rst": "rst",
    ".adoc": "asciidoc",
    ".toml": "toml",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".ini": "ini",
    ".cfg": "ini",
    ".json": "json",
    ".xml": "xml",
    # MSBuild project files: where a .NET project's dependencies and build settings live.
    ".csproj": "xml",
    ".fsproj": "xml",
    ".vbproj": "xml",
    ".props": "xml",
    ".targets": "xml",
    ".properties": "ini",  # key=value, scanned for secrets like the other config files
    ".html": "html",
    ".htm": "html",
    ".css": "css",
    ".scss": "scss",
    ".sql": "sql",
    ".sh": "shell",
    ".bash": "shell",
    ".zsh": "shell",
    ".proto": "protobuf",
    ".graphql": "graphql",
    ".gradle": "groovy",
    ".swift": "swift",
    ".scala": "scala",
    ".lua": "lua",
    ".dart": "dart",
    ".ex": "elixir",
    ".exs": "elixir",
    ".erl": "erlang",
    ".hs": "haskell",
    ".ml": "ocaml",
    ".r": "r",
    ".jl": "julia",
    ".vue": "vue",
    ".svelte": "svelte",
    ".tf": "terraform",
    ".cmake": "cmake",
}

TEXT_FILENAMES: dict[str, str] = {
    "Makefile": "make",
    "Dockerfile": "dockerfile",
    "CMakeLists.txt": "cmake",
    "Gemfile": "ruby",
    "Rakefile": "ruby",
    "Guardfile": "ruby",
    "Jenkinsfile": "groovy",
}


def language_of(rel_path: str) -> str | None:
    """The language of a workspace-relative path, or None if ragls does not index it."""
    # PurePosixPath's name and suffix rules, without building a path: discovery asks this of
    # every file, twice.
    name = rel_path.rstrip("/").rsplit("/", 1)[-1]
    if name in TEXT_FILENAMES:
        return TEXT_FILENAMES[name]
    dot = name.rfind(".")
    ext = name[dot:].lower() if 0 < dot < len(name) - 1 else ""
    return CODE_EXTENSIONS.get(ext) or MARKDOWN_EXTENSIONS.get(ext) or TEXT_EXTENSIONS.get(ext)


# Constructs that only C++ has: a `.h` file using any of them is a C++ header. Headers are
# shared by C and C++ projects, and C++ parsed with the C grammar loses its classes,
# namespaces and templates (every member function becomes an error node or a window).
_CPP_MARKERS = re.compile(
    r"^\s*(namespace\s+[\w:]*\s*\{|template\s*<|(class|struct)\s+\w+[^;{]*:\s*(public|private|protected)\b"
    r"|(public|private|protected)\s*:|using\s+namespace\b|#\s*include\s*<(iostream|string|vector|memory|map|utility"
    r"|functional|type_traits|algorithm|cstdint|cstddef|cstring|sstream)>)"
    r"|\bstd::\w",
    re.MULTILINE,
)


def refine_language(rel_path: str, language: str, text: str) -> str:
    """The language once the text is known: a `.h` header written in C++ is C++."""
    if language == "c" and rel_path.lower().endswith(".h") and _CPP_MARKERS.search(text[:200_000]):
        return "cpp"
    return language


_CODE_LANGUAGES = frozenset(CODE_EXTENSIONS.values())


def is_code(language: str) -> bool:
    """True for a programming language (chunked along its syntax tree), not docs, config or data."""
    return language in _CODE_LANGUAGES
