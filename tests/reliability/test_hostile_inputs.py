"""Hostile and odd files: discovery and chunking skip, count and log them; never crash or hang."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragls.chunking import SUPPORTED_CODE_LANGUAGES, chunk_file
from ragls.config import Settings
from ragls.ingest.discovery import decode_source, discover, read_source
from tests.conftest import IN_CI
from tests.reliability.conftest import run_cli

SNIPPETS = {
    "python": "def f(x):\n    return [y for y in x if y]\nclass A:\n    def m(self): pass\n",
    "javascript": "function f(a) { return a.map(x => x * 2); }\nclass A { m() {} }\n",
    "typescript": "export function f(a: number[]): number { return a.length }\ninterface I { x: string }\n",
    "tsx": "export const C = (p: {a: string}) => <div>{p.a}</div>;\n",
    "go": "package p\nfunc F(a []int) int { return len(a) }\ntype T struct{ X int }\n",
    "rust": "pub fn f(a: &[u8]) -> usize { a.len() }\nimpl T { fn m(&self) {} }\n",
    "java": "class A { int f(int[] a) { return a.length; } }\n",
    "kotlin": "fun f(a: List<Int>) = a.size\nclass A { fun m() {} }\n",
    "c": "int f(int *a) { return a[0]; }\nstruct S { int x; };\n",
    "cpp": "namespace n { int f(int a) { return a; } }\nclass A { void m(); };\n",
    "csharp": "class A { int F(int a) { return a; } }\n",
    "ruby": "def f(a)\n  a.size\nend\nclass A\n  def m; end\nend\n",
    "php": "<?php\nfunction f($a) { return count($a); }\nclass A { function m() {} }\n",
}


def _check_chunks(language: str, text: str) -> None:
    chunks = chunk_file(f"x.{language}", language, text)
    n = text.count("\n") + 1
    lines = text.split("\n")
    for c in chunks:
        assert 1 <= c.start_line <= c.end_line <= n
        assert c.text == "\n".join(lines[c.start_line - 1 : c.end_line])


@pytest.mark.parametrize("language", SUPPORTED_CODE_LANGUAGES)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_random_broken_code_never_crashes_the_chunker(language: str, data: st.DataObject) -> None:
    base = SNIPPETS[language]
    cut = data.draw(st.integers(0, len(base)))
    noise = data.draw(st.text(alphabet=st.sampled_from(list("{}()[];:<>\"'`/\\*#\n\t =.,$@")), max_size=40))
    text = base[:cut] + noise + base[cut:] + data.draw(st.text(max_size=60))
    _check_chunks(language, text)


@settings(max_examples=200, deadline=None)
@given(raw=st.binary(max_size=3000))
def test_random_bytes_never_crash_decoding_or_chunking(raw: bytes) -> None:
    res = decode_source(raw)
    assert res.skip is not None or res.text is not None
    if res.text is not None:
        for language in ("python", "javascript", "go", "rust", "markdown", "text"):
            _check_chunks(language, res.text)


def _hostile_workspace(root: Path, outside: Path) -> None:
    (root / "src").mkdir(parents=True)
    (root / "src" / "good.py").write_text("def fine_function():\n    return 'ok'\n")
    (root / "src" / "binary.py").write_bytes(b"\x7fELF\x00\x00\x01" + os.urandom(4000))
    (root / "src" / "latin1.py").write_bytes("def caf\xe9():\n    return 1\n".encode("latin-1") + b"\xff\xfe" * 200)
    (root / "src" / "utf16.py").write_bytes("def utf16_function():\n    return 1\n".encode("utf-16"))
    (root / "src" / "nul.js").write_bytes(b"function a() {}\x00\x00\x00function b() {}")
    (root / "src" / "vendor_bundle.js").write_bytes(b"var a=1;" * (50 * 1024 * 1024 // 8))  # 50 MB, one line
    with open(root / "src" / "generated_table.py", "w") as fh:
        fh.write("TABLE = [\n")
        fh.writelines(f"    {i},\n" for i in range(200_000))
        fh.write("]\n")
    deep = root.joinpath(*[f"d{i}" for i in range(60)])
    deep.mkdir(parents=True)
    (deep / "deep.py").write_text("def very_deep_function():\n    return 1\n")
    os.symlink(root, root / "src" / "loop")
    os.symlink(outside, root / "outside_link")
    os.symlink(outside / "secret.py", root / "src" / "outside_file.py")
    (root / "src" / "broken.py").write_text("def broken(:\n    return ((((\nclass\n")
    try:
        (root / os.fsdecode(b"bad_name_\xff.py")).write_text("def weird(): pass\n")
    except (OSError, UnicodeEncodeError):
        pass


def test_hostile_workspace_is_indexed_without_crash(tmp_path: Path, rcache: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text("def outside_secret_function():\n    return 'never'\n")
    ws = tmp_path / "ws"
    _hostile_workspace(ws, outside)
    code, status, err = run_cli(["index", str(ws), "-q"], rcache, timeout=300)
    assert code == 0, err[-3000:]
    assert status["state"] == "ready"
    reasons = status["skippedByReason"]
    assert reasons.get("binary", 0) >= 2  # binary.py, nul.js
    assert reasons.get("too_large", 0) >= 2  # 50 MB minified, 200k-line table
    assert reasons.get("outside_workspace", 0) == 2
    assert reasons.get("bad_filename", 0) + reasons.get("unsupported", 0) >= 0
    code, out, _ = run_cli(["search", str(ws), "outside_secret_function never", "--json", "-k", "20"], rcache)
    assert code == 0
    res = out_json(out)
    assert not any("outside" in c["path"] for c in res["chunks"])
    assert "outside_secret_function" not in res["context"]
    code, out, _ = run_cli(["search", str(ws), "fine_function", "--json", "-k", "3"], rcache)
    assert out_json(out)["chunks"][0]["path"] == "src/good.py"
    code, out, _ = run_cli(["search", str(ws), "very_deep_function utf16_function", "--json", "-k", "20"], rcache)
    paths = {c["path"] for c in out_json(out)["chunks"]}
    assert any(p.endswith("deep.py") for p in paths) and "src/utf16.py" in paths


def out_json(out: object) -> dict:
    assert isinstance(out, dict), out
    return out


def test_unreadable_and_vanishing_files(tmp_path: Path) -> None:
    """Permission denied needs a non-root user: run discovery + reading as `nobody`."""
    setpriv = shutil.which("setpriv")
    if os.geteuid() != 0 or setpriv is None:
        if IN_CI:
            pytest.fail("needs root and setpriv to test permission-denied files")
        pytest.skip("needs root and setpriv")
    base = Path(tempfile.mkdtemp(prefix="ragls-perm-"))
    try:
        os.chmod(base, 0o755)
        (base / "ok.py").write_text("def ok(): pass\n")
        (base / "locked.py").write_text("def locked(): pass\n")
        os.chmod(base / "locked.py", 0o000)
        (base / "locked_dir").mkdir()
        (base / "locked_dir" / "x.py").write_text("def x(): pass\n")
        os.chmod(base / "locked_dir", 0o000)
        script = (
            "import sys; from pathlib import Path; from ragls.ingest.discovery import discover, read_source\n"
            "from ragls.config import Settings\n"
            "d = discover(Path(sys.argv[1]), Settings())\n"
            "print(sorted((f.rel, read_source(f.path, 10**6, sys.argv[1]).skip) for f in d.files), dict(d.skipped))\n"
        )
        server_dir = Path(__file__).resolve().parents[2] / "server"
        out = subprocess.run(
            [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable, "-c", script, str(base)],
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "PYTHONPATH": str(server_dir)},
        )
        assert out.returncode == 0, out.stderr
        assert "('locked.py', 'unreadable')" in out.stdout and "('ok.py', None)" in out.stdout
        assert "'unreadable': 1" in out.stdout  # the locked directory
    finally:
        os.chmod(base / "locked_dir", 0o755)
        shutil.rmtree(base)
    # Vanishing between listing and reading is reported, not raised.
    gone = tmp_path / "gone.py"
    gone.write_text("x = 1\n")
    d = discover(tmp_path, Settings())
    gone.unlink()
    assert read_source(d.files[0].path, 10**6, tmp_path).skip == "vanished"
