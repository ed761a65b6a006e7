"""Golden-set builder: doc extraction per language, query cleaning, stripping and line maps.

Run with: .venv/bin/python -m pytest eval/tests
"""

from __future__ import annotations

import sys
from pathlib import Path

EVAL = Path(__file__).resolve().parents[1]
for entry in (str(EVAL), str(EVAL.parent / "server")):
    if entry not in sys.path:
        sys.path.insert(0, entry)

import pytest  # noqa: E402

from goldenbuild import docs  # noqa: E402
from goldenbuild.build import _glob_regex, strip_file  # noqa: E402
from goldenbuild.extract import FunctionDoc, extract, is_test_path  # noqa: E402
from goldenbuild.strip import Edit, strip_lines  # noqa: E402


def by_symbol(found: list[FunctionDoc]) -> dict[str, FunctionDoc]:
    return {f.symbol: f for f in found}


def test_strip_lines_maps_kept_and_removed_lines() -> None:
    text = "a\nb\nc\nd\ne"
    stripped = strip_lines(text, [Edit(2, 3), Edit(5, 5, ("E",))])
    assert stripped.text == "a\nd\nE"
    assert stripped.new_line[1:] == [1, 2, 2, 2, 3]
    with pytest.raises(ValueError, match="overlapping"):
        strip_lines(text, [Edit(1, 3), Edit(3, 4)])


PYTHON = '''\
import functools


class Box:
    """Class docs stay."""

    @functools.cache
    def area(self, scale):
        """Compute the area of the box, scaled.

        :param scale: factor
        """
        return scale * 2

    def only_doc(self):
        """Placeholder that does nothing at all."""

    def _hidden(self):
        """Private helpers are never asked about."""
        return 1


def test_area():
    """Tests are never asked about either."""
'''


def test_python_extraction_and_stripping() -> None:
    data, found = strip_file("pkg/box.py", PYTHON.encode())
    items = by_symbol(found)
    area = items["Box.area"]
    assert area.query == "Compute the area of the box, scaled."
    assert area.eligible
    assert not items["Box._hidden"].eligible
    assert not items["test_area"].eligible
    new = data.decode().split("\n")
    # Decorator included; the 4-line docstring is gone.
    assert (area.start_line, area.end_line) == (7, 9)
    assert new[6].strip() == "@functools.cache" and new[8].strip() == "return scale * 2"
    only = items["Box.only_doc"]
    assert new[only.start_line - 1].strip() == "def only_doc(self):"
    assert new[only.end_line - 1].strip() == "..."
    assert '"""Class docs stay."""' in data.decode()
    assert "Placeholder" not in data.decode()


JAVASCRIPT = """\
/**
 * @license MIT
 */

/**
 * Creates a function that memoizes the result of func.
 *
 * @param {Function} func The function.
 * @returns {Function} Returns the memoized function.
 */
export function memoize(func) {
  /** Inner closures are private. */
  function inner() {}
  return inner;
}

/**
 * Checks if value is classified as an Array object.
 *
 * @param {*} value The value to check.
 */
var isArray = Array.isArray;

/** A constant, not a function. */
var MAX = 10;

class Cache {
  /**
   * Removes the entry for key from the cache.
   */
  delete(key) {
    return true;
  }

  /**
   * Internal bookkeeping of the cache entries.
   * @private
   */
  track() {}
}
"""


def test_javascript_jsdoc_extraction() -> None:
    data, found = strip_file("src/cache.js", JAVASCRIPT.encode())
    items = by_symbol(found)
    assert set(items) == {"memoize", "inner", "isArray", "Cache.delete", "Cache.track"}
    assert items["memoize"].query == "Creates a function that memoizes the result of func."
    assert items["isArray"].query == "Checks if value is classified as an Array object."
    assert items["Cache.delete"].eligible and items["Cache.delete"].symbol == "Cache.delete"
    assert not items["inner"].eligible  # nested closure
    assert not items["Cache.track"].eligible  # @private
    text = data.decode()
    assert "@license MIT" in text and "A constant, not a function." in text
    assert "memoizes" not in text and "Removes the entry" not in text
    lines = text.split("\n")
    memoize = items["memoize"]
    assert lines[memoize.start_line - 1] == "export function memoize(func) {"
    assert lines[memoize.end_line - 1] == "}"


TYPESCRIPT = """\
/** @deprecated Use the other overload. */
export function pick<T>(x: T, y: number): T;
/**
 * Picks the first value of the given list.
 */
export function pick<T>(x: T): T {
  return x;
}

export class Store {
  /** Returns the number of items kept in the store. */
  private size(): number {
    return 0;
  }
}
"""


def test_typescript_overloads_and_modifiers() -> None:
    found = extract("lib/pick.ts", TYPESCRIPT.encode())
    implementation = [f for f in found if f.symbol == "pick" and f.eligible]
    assert len(implementation) == 1
    assert implementation[0].query == "Picks the first value of the given list."
    signatures = [f for f in found if f.symbol == "pick" and not f.eligible]
    assert signatures and signatures[0].doc_lines == (1, 1)  # stripped, never asked
    assert not by_symbol(found)["Store.size"].eligible  # private member


GO = """\
package demo

// Router registers routes and dispatches incoming requests to them.
type Router struct{}

// HandleFunc registers a new route with a matcher for the URL path.
// See Route.Path() for details.
//
// Deprecated paragraphs and details are not part of the query.
func (r *Router) HandleFunc(path string) *Route {
	return nil
}

// helper is unexported and never asked about, even with a long doc.
func helper() {}

// TestSomething looks like a test but lives in a normal file.
func TestSomething() {}
"""


def test_go_doc_comments() -> None:
    data, found = strip_file("demo/router.go", GO.encode())
    items = by_symbol(found)
    handle = items["Router.HandleFunc"]
    assert handle.query == "Registers a new route with a matcher for the URL path. See Route.Path() for details."
    assert handle.eligible
    assert not items["helper"].eligible and not items["TestSomething"].eligible
    lines = data.decode().split("\n")
    assert lines[handle.start_line - 1].startswith("func (r *Router) HandleFunc")
    assert "// Router registers routes" in data.decode()  # type docs stay


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (
            "Return :class:`~attr.Attribute` for ``name`` and *all* of **them**.",
            "Return Attribute for name and all of them.",
        ),
        ("See {@link Observable|the observable} and [docs](http://x).", "See the observable and docs."),
        ("Keep __init__ and snake_case_name intact please.", "Keep __init__ and snake_case_name intact please."),
        ("Adds a matcher for headers. It accepts pairs. For example:", "Adds a matcher for headers. It accepts pairs."),
    ],
)
def test_markup_is_removed(raw: str, expected: str) -> None:
    assert docs.strip_markup(raw) == expected


def test_query_rules() -> None:
    assert docs.python_query("Include what.\n\n:param what: x") is None  # < 4 words
    assert docs.python_query("Summary line that is long enough.\nArgs:\n  x: y") == (
        "Summary line that is long enough."
    )
    long = "First sentence has several words in it. " + "Then more words follow here. " * 10
    assert docs.finish(long) == "First sentence has several words in it."
    assert len(docs.finish("word " * 100).split()) == docs.MAX_WORDS
    assert docs.go_query("// Deprecated: use Other instead of this one.", "Old") is None
    assert docs.jsdoc_query("/**\n * @description Explicit summary tag text here.\n */") == (
        "Explicit summary tag text here."
    )


def test_test_paths_and_globs() -> None:
    assert is_test_path("tests/test_x.py") and is_test_path("src/a.spec.ts")
    assert is_test_path("pkg/router_test.go") and is_test_path("conftest.py")
    assert not is_test_path("src/attr/_make.py") and not is_test_path("lib/latest.js")
    assert _glob_regex("**/*.py").match("a/b/c.py") and _glob_regex("**/*.py").match("c.py")
    assert not _glob_regex("*.py").match("a/c.py")
    assert _glob_regex("dist/**").match("dist/x/y.js")


SOURCE_TOML = """\
[[project]]
name = "{name}"
version = "1.0"
language = "python"
split = "held-out"
registry = "npm"
package = "{package}"
filename = "x-1.0.tgz"
sha256 = "{sha}"
subdir = "package"
"""


def test_blocklist_key_normalises_like_the_list_header() -> None:
    # The header's example: 'Foo-Bar_2' -> 'foobar2' -> sha256 -> first 16 hex digits.
    import hashlib

    from goldenbuild.sources import blocklist_key

    assert blocklist_key("Foo-Bar_2") == hashlib.sha256(b"foobar2").hexdigest()[:16] == blocklist_key("FOOBAR2")
    assert len(blocklist_key("x")) == 16


@pytest.mark.parametrize(
    ("name", "package", "refused"),
    [("fresh-project", "fresh-project", False), ("Blocked_Lib", "fresh", True), ("fresh", "blocked-lib", True)],
)
def test_builder_refuses_blocklisted_names(tmp_path: Path, name: str, package: str, refused: bool) -> None:
    from goldenbuild.sources import blocklist_key, load_sources

    blocklist = tmp_path / "blocklist.txt"
    blocklist.write_text(f"# header\n{blocklist_key('blockedlib')}\n", encoding="utf-8")
    sources = tmp_path / "sources.toml"
    sources.write_text(SOURCE_TOML.format(name=name.lower(), package=package, sha="0" * 64), encoding="utf-8")
    if refused:
        with pytest.raises(SystemExit, match="blocklisted"):
            load_sources(sources, blocklist)
    else:
        assert load_sources(sources, blocklist).project[0].split == "held-out"


def test_pinned_sources_are_not_blocklisted() -> None:
    from goldenbuild.sources import load_sources

    config = load_sources(EVAL / "sources.toml")  # raises if any project is on the team's list
    assert {p.split for p in config.project} == {"dev", "held-out", "sealed"}
    assert len({p.language for p in config.project}) == 13


def _aliases(name: str) -> set[str]:
    """A name and the upstream names a registry decorates it into (the embedder's rule:
    `librust-foo-dev` is also `foo`, `@scope/foo` also `foo`), normalised like the blocklist."""
    import re

    sys.path.insert(0, str(EVAL.parent / "scripts" / "embedder"))
    from fetch import aliases, normalise

    return {normalise(a) for a in aliases(name)} | {re.sub(r"[^a-z0-9]", "", name.lower())}


def test_sealed_split_is_guarded_like_held_out() -> None:
    """The sealed doc -> code projects (issue 52): at least 20, every chunked language, several
    for Rust, C++, Go and TypeScript, and each one new: no name or registry package shared with
    a dev or held-out project, the commit task's or the issue task's repositories, and none on
    the blocklist (load_sources refuses those). That the embedder never trained on them is
    tests/unit/test_embedder_data.py's check."""
    from collections import Counter

    from goldenbuild.sources import load_sources
    from ragls.evaluation.commits import load_config as load_commits
    from ragls.evaluation.issues import load_config as load_issues

    config = load_sources(EVAL / "sources.toml")
    sealed = [p for p in config.project if p.split == "sealed"]
    languages = Counter(p.language for p in sealed)
    assert len(sealed) >= 20
    assert set(languages) == {p.language for p in config.project if p.split != "sealed"}
    assert all(languages[lang] >= 2 for lang in ("rust", "cpp", "go", "typescript")), languages
    names = [p.name for p in config.project]
    assert len(names) == len(set(names))
    assert len({(p.registry, p.package) for p in config.project}) == len(config.project)

    others = {a for p in config.project if p.split != "sealed" for n in (p.name, p.package) for a in _aliases(n)}
    for repo in [*load_commits(EVAL / "commits.toml").repo, *load_issues(EVAL / "issues.toml").repo]:
        others |= {a for n in (repo.name, *repo.github.split("/")) for a in _aliases(n)}
    for p in sealed:
        assert not (_aliases(p.name) | _aliases(p.package)) & others, p.name
        assert p.max_queries is None  # same sampling as every other set: nothing tuned per project


RUST = b"""\
/// Parses a version string into its numeric parts.
#[inline]
pub fn parse(text: &str) -> u32 { 0 }

impl<T> Stack<T> {
    /// Pushes an element on top of the stack, growing it.
    pub fn push(&mut self, v: T) {}
    /// Crate-private helpers are never asked about.
    pub(crate) fn grow(&mut self) {}
}

pub trait Named {
    /// Returns the display name of this thing.
    fn name(&self) -> String;
}
"""

CPP = b"""\
namespace lib {
class Parser {
  public:
    /// Adds an option with a long and a short flag.
    template <typename T> void add(T flag) { }
  private:
    /// Resets the internal parse state completely.
    void reset() { }
};
namespace detail {
/// Splits a string at every separator character.
inline int split() { return 0; }
}
}
"""

C_SOURCE = b"""\
/*
 * Create a new parser object and initialise it.
 */

int
yaml_parser_initialize(int *parser)
{
    return 0;
}

/* Declared only: the doc is stripped, but this is no answer. */
int yaml_parser_delete(int *parser);
"""

RUBY = b"""\
class Builder
  # Adds a header line to the response being built.
  def add_header(name)
  end

  private

  # Computes the internal buffer size for the body.
  def buffer_size
  end
end
"""

CSHARP = b"""\
public class Runtime {
    /// <summary>
    /// Converts a <see cref="T:System.Object"/> into a Python object reference.
    /// </summary>
    public static object ToPython(object value) { return value; }
    /// <summary>Field-like helpers without access modifiers are private.</summary>
    void Hidden() { }
}
"""


def test_rust_docs_skip_attributes_and_respect_pub() -> None:
    found = by_symbol(extract("src/lib.rs", RUST))
    assert found["parse"].doc_lines == (1, 1) and found["parse"].start_line == 3
    assert found["parse"].query == "Parses a version string into its numeric parts."
    assert found["Stack.push"].eligible
    assert not found["Stack.grow"].eligible  # pub(crate)
    assert found["Named.name"].doc_lines == (13, 13) and not found["Named.name"].eligible  # no body


def test_cpp_access_labels_namespaces_and_templates() -> None:
    found = by_symbol(extract("include/parser.h", CPP, "cpp"))
    assert found["Parser.add"].eligible and found["Parser.add"].start_line == 5  # template line included
    assert not found["Parser.reset"].eligible  # private section
    assert not found["split"].eligible  # detail namespace
    # The same header in a C project is parsed as C: no class, so no qualified member.
    assert "Parser.add" not in by_symbol(extract("include/parser.h", CPP))


def test_c_comment_after_blank_line_and_prototypes() -> None:
    found = by_symbol(extract("src/api.c", C_SOURCE))
    init = found["yaml_parser_initialize"]
    assert init.doc_lines == (1, 3) and init.eligible
    assert init.query == "Create a new parser object and initialise it."
    assert found["yaml_parser_delete"].doc_lines == (11, 11) and not found["yaml_parser_delete"].eligible


def test_ruby_private_section_and_csharp_summary() -> None:
    ruby = by_symbol(extract("lib/builder.rb", RUBY))
    assert ruby["Builder.add_header"].eligible and ruby["Builder.add_header"].doc_lines == (2, 2)
    assert not ruby["Builder.buffer_size"].eligible
    cs = by_symbol(extract("src/Runtime.cs", CSHARP))
    assert cs["Runtime.ToPython"].query == "Converts a Object into a Python object reference."
    assert not cs["Runtime.Hidden"].eligible


def test_stripped_rust_file_keeps_definitions_in_place() -> None:
    stripped, found = strip_file("src/lib.rs", RUST)
    text = stripped.decode()
    assert "Parses a version" not in text and "#[inline]" in text
    parse = by_symbol(found)["parse"]
    assert text.split("\n")[parse.start_line - 1].startswith("pub fn parse")


def test_commit_task_repositories_are_not_blocklisted() -> None:
    from goldenbuild.sources import blocklist_key, load_blocklist
    from ragls.evaluation.commits import load_config

    blocked = load_blocklist()
    for repo in load_config(EVAL / "commits.toml").repo:
        for name in (repo.name, *repo.github.split("/")):
            assert blocklist_key(name) not in blocked, name
