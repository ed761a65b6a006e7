"""Turn a function's doc text into a search query: its summary in plain words.

As in CodeSearchNet the query is the doc's first paragraph, cut before parameter/return
sections, examples and directives, with markup removed. The same length rules apply to every
language so that no project gets easier or harder queries by accident of style.
"""

from __future__ import annotations

import re

MIN_WORDS = 4
# Long first paragraphs are cut to their first sentence; past this many words, to this many.
LONG_WORDS = 40
MAX_WORDS = 60

# A line that opens a section which is not part of the summary, in any docstring style
# (reST field lists, Google, NumPy, doctest, directives, Markdown headings and fences).
_SECTION = re.compile(
    r"^\s*(:\w[^:`]*:(\s|$)|(Args|Arguments|Parameters|Params|Returns?|Yields?|Raises|Throws|Examples?"
    r"|Notes?|See Also|Warnings?|Usage|Attributes)\s*:?\s*$|>>>|\.\.\s|#|```|-{3,}|={3,}|@\w)"
)
_RST_ROLE = re.compile(r":[\w:.-]+:`(?P<body>[^`]+)`")
_RST_TITLED = re.compile(r"^(?P<title>.+?)\s*<[^<>]+>$")
_INLINE_LINK = re.compile(r"\{@(?:link|linkcode|linkplain)\s+(?P<body>[^}]+)\}")
_MD_IMAGE = re.compile(r"!\[[^\]]*\]\([^)]*\)")
_MD_LINK = re.compile(r"\[(?P<text>[^\]]+)\]\([^)]*\)")
_GO_DOC_LINK = re.compile(r"\[(?P<text>\*?[\w.]+)\]")
_HTML_TAG = re.compile(r"</?[a-zA-Z][^<>]*>")
_CODE = re.compile(r"(``?)(?P<body>[^`]+?)\1")
_EMPHASIS = re.compile(r"(?<!\w)(\*\*|\*)(?P<body>[^*\s](?:[^*]*?[^*\s])?)\1(?!\w)")
_TRAILING_INTRO = re.compile(r"(?<=[.!?])\s+[^.!?]*:$")
_SPACE = re.compile(r"\s+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`'\"(\[])")
_JSDOC_HIDDEN = re.compile(r"@(private|internal|ignore|hidden|protected)\b")


def _rst_role(match: re.Match[str]) -> str:
    body = match.group("body")
    titled = _RST_TITLED.match(body)
    if titled:
        return titled.group("title")
    if body.startswith("~"):
        return body[1:].rsplit(".", 1)[-1]
    return body.lstrip("!")


def _link(match: re.Match[str]) -> str:
    body = match.group("body").strip()
    for sep in ("|", " "):
        if sep in body:
            return body.split(sep, 1)[1].strip()
    return body


def strip_markup(text: str) -> str:
    text = _RST_ROLE.sub(_rst_role, text)
    text = _INLINE_LINK.sub(_link, text)
    text = _MD_IMAGE.sub(" ", text)
    text = _MD_LINK.sub(lambda m: m.group("text"), text)
    text = _HTML_TAG.sub(" ", text)
    text = _CODE.sub(lambda m: m.group("body"), text)
    text = _EMPHASIS.sub(lambda m: m.group("body"), text)
    text = _SPACE.sub(" ", text).strip()
    # "... For example:" introduces a code sample that was cut off; the lead-in says nothing.
    return _TRAILING_INTRO.sub("", text)


def first_paragraph(lines: list[str]) -> str:
    """Lines up to the first blank line or section opener, joined."""
    kept: list[str] = []
    for line in lines:
        if not line.strip():
            if kept:
                break
            continue
        if _SECTION.match(line):
            break
        kept.append(line.strip())
    return " ".join(kept)


def shorten(text: str) -> str:
    words = text.split()
    if len(words) > LONG_WORDS:
        text = _SENTENCE_END.split(text, maxsplit=1)[0]
        words = text.split()
    if len(words) > MAX_WORDS:
        text = " ".join(words[:MAX_WORDS])
    return text


def finish(text: str) -> str | None:
    """Markup-free, shortened query, or None when it is too short to be a real question."""
    text = shorten(strip_markup(text))
    if len(re.findall(r"[A-Za-z]{2,}", text)) < MIN_WORDS:
        return None
    return text


def python_query(docstring: str) -> str | None:
    """`docstring` as cleaned by inspect.cleandoc (ast.get_docstring)."""
    return finish(first_paragraph(docstring.splitlines()))


def jsdoc_lines(comment: str) -> list[str]:
    body = comment.strip()
    body = body.removeprefix("/**").removesuffix("*/")
    return [re.sub(r"^\s*\*? ?", "", line) for line in body.splitlines()]


def jsdoc_hidden(comment: str) -> bool:
    """Doc tags that mark an API as not public."""
    return bool(_JSDOC_HIDDEN.search(comment))


def jsdoc_query(comment: str) -> str | None:
    lines = jsdoc_lines(comment)
    summary = first_paragraph(lines)
    if not summary:
        # Some projects put the summary in an explicit tag instead of the leading text.
        for line in lines:
            tagged = re.match(r"\s*@(?:description|summary)\s+(.*)", line)
            if tagged:
                summary = tagged.group(1)
                break
    return finish(summary)


def go_comment_lines(comment: str) -> list[str]:
    lines: list[str] = []
    for line in comment.splitlines():
        stripped = line.strip()
        # Compiler directives (//go:generate, //nolint) are not prose.
        if re.match(r"//(go:|\+build|nolint|lint:)", stripped):
            continue
        if stripped.startswith("//"):
            lines.append(stripped[2:].removeprefix(" "))
        else:
            lines.append(stripped.removeprefix("/*").removesuffix("*/"))
    return lines


def go_query(comment: str, name: str) -> str | None:
    """Go docs open with the function's name ("Equal asserts ..."); a user asking a question
    would not know the name, so it is dropped and the remaining verb phrase kept."""
    summary = first_paragraph(go_comment_lines(comment))
    if summary.lower().startswith("deprecated"):
        return None
    summary = _GO_DOC_LINK.sub(lambda m: m.group("text"), summary)  # Go 1.19 [pkg.Name] links
    words = summary.split(" ", 1)
    if len(words) == 2 and words[0] in (name, f"{name}()"):
        summary = words[1]
        summary = summary[:1].upper() + summary[1:]
    return finish(summary)
