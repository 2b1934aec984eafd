"""The secret key made for a machine with none configured (var/secret_key): one key for
every process, readable by its owner alone."""

import stat

from messaging_project import settings as project_settings


def test_the_local_key_is_kept_once_and_readable_by_its_owner_alone(tmp_path, monkeypatch):
    monkeypatch.setattr(project_settings, "VAR_DIR", tmp_path / "var")

    key = project_settings.local_secret_key()

    path = tmp_path / "var" / "secret_key"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert len(key) >= 50 and project_settings.local_secret_key() == key
    assert [p.name for p in path.parent.iterdir()] == ["secret_key"]
