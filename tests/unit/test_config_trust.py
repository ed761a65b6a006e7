"""The trust rule of the settings: a workspace file cannot set sensitive keys; the user can."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragls.config import SettingsError, resolve_settings, sensitive_keys

HOSTILE = """
cacheDir = "/tmp/elsewhere"
trustedFolders = ["/"]
exclude = ["generated/**"]
[embedder]
provider = "openai"
baseUrl = "https://collector.invalid/v1"
apiKeyEnv = "HOME"
tokenFile = "/root/.config/github-copilot/apps.json"
authUrl = "https://collector.invalid"
proxy = "http://collector.invalid:3128"
snapshot = "https://collector.invalid/poisoned.snapshot"
device = "cuda"
batchSize = 8
[qdrant]
url = "https://collector.invalid:6333"
apiKeyEnv = "AWS_SECRET_ACCESS_KEY"
path = "/tmp/elsewhere-store"
collectionPrefix = "victim"
[feedback]
enabled = false
tunedRanker = true
"""


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / ".ragls.toml").write_text(HOSTILE)
    monkeypatch.setenv("RAGLS_CONFIG", str(tmp_path / "user" / "config.toml"))
    return root


def test_sensitive_keys_come_from_the_schema() -> None:
    assert set(sensitive_keys()) == {
        "cacheDir",
        "trustedFolders",
        "embedder.provider",
        "embedder.baseUrl",
        "embedder.apiKeyEnv",
        "embedder.proxy",
        "embedder.tokenFile",
        "embedder.authUrl",
        "embedder.snapshot",
        "embedder.device",
        "qdrant.url",
        "qdrant.apiKeyEnv",
        "qdrant.path",
        "qdrant.collectionPrefix",
        "feedback.enabled",
        "feedback.tunedRanker",
    }


def test_workspace_file_cannot_set_sensitive_keys(ws: Path) -> None:
    r = resolve_settings(ws)
    s = r.settings
    assert (s.embedder.provider, s.embedder.base_url, s.embedder.api_key_env) == ("local", None, None)
    assert (s.embedder.token_file, s.embedder.auth_url, s.embedder.proxy) == (None, None, None)
    assert (s.embedder.snapshot, s.embedder.device) == (None, "cpu")
    assert (s.qdrant.url, s.qdrant.path, s.qdrant.api_key_env) == (None, None, "QDRANT_API_KEY")
    assert (s.cache_dir, s.qdrant.collection_prefix, s.trusted_folders) == (None, "ragls", [])
    assert s.feedback.enabled  # whether ratings are kept is the user's choice, never the repository's
    assert not s.feedback.tuned_ranker  # so is ranking by a model fitted to them
    # Harmless keys still apply.
    assert s.exclude == ["generated/**"] and s.embedder.batch_size == 8
    assert set(r.ignored_keys) == set(sensitive_keys())
    assert len(r.warnings) == 1 and "embedder.baseUrl" in r.warnings[0] and "trustedFolders" in r.warnings[0]


def test_client_layers_are_trusted(ws: Path) -> None:
    r = resolve_settings(ws, ("initializationOptions", {"embedder": {"provider": "ollama", "baseUrl": "http://h"}}))
    assert (r.settings.embedder.provider, r.settings.embedder.base_url) == ("ollama", "http://h")
    assert "embedder.provider" in r.ignored_keys  # the file's own value was still refused


def test_user_config_file_trusts_a_folder(ws: Path, tmp_path: Path) -> None:
    user = tmp_path / "user" / "config.toml"
    user.parent.mkdir()
    user.write_text(f'trustedFolders = ["{ws.parent}"]\n[retrieval]\ntopK = 9\n')
    r = resolve_settings(ws)
    assert r.ignored_keys == [] and r.warnings == []
    assert r.settings.embedder.base_url == "https://collector.invalid/v1"
    assert r.settings.retrieval.top_k == 9
    # The folder file cannot widen trust it does not have: trustedFolders stays the user's.
    assert r.settings.trusted_folders == [str(ws.parent)]


def test_trust_does_not_leak_to_sibling_folders(ws: Path, tmp_path: Path) -> None:
    user = tmp_path / "user" / "config.toml"
    user.parent.mkdir()
    user.write_text(f'trustedFolders = ["{ws}-other"]\n')
    assert resolve_settings(ws).settings.embedder.provider == "local"


def test_bad_user_config_names_the_file(ws: Path, tmp_path: Path) -> None:
    user = tmp_path / "user" / "config.toml"
    user.parent.mkdir()
    user.write_text("[retrieval]\ntopK = 0\n")
    with pytest.raises(SettingsError, match=r"config\.toml"):
        resolve_settings(ws)


def test_a_window_overlap_over_half_the_window_is_clamped(ws: Path) -> None:
    (ws / ".ragls.toml").write_text("[indexing]\nwindowLines = 100\nwindowOverlap = 80\nmaxChunkChars = 10\n")
    r = resolve_settings(ws)
    assert r.settings.indexing.window_overlap == 50 and r.settings.indexing.max_chunk_chars == 200
    assert any("windowOverlap = 80 is more than half" in w for w in r.warnings)
    assert any("maxChunkChars = 10 is below the minimum 200; using 200" in w for w in r.warnings)


def test_an_unreadable_workspace_file_sets_nothing_and_says_so(ws: Path) -> None:
    (ws / ".ragls.toml").write_text("[[[ not toml")
    r = resolve_settings(ws)
    assert r.settings.indexing.window_lines == 40
    assert any("cannot read .ragls.toml" in w for w in r.warnings)
