"""Where media is kept, from the environment: the file system under MEDIA_ROOT by default,
an S3-compatible bucket through django-storages with MEDIA_STORAGE=s3."""

import os
import subprocess
import sys

import pytest
from django.conf import settings

SHOW = (
    "import django; django.setup(); from django.core.files.storage import storages; "
    "s = storages['default']; print(type(s).__name__); "
    "print(getattr(s, 'bucket_name', None) or s.location); "
    "print(getattr(s, 'endpoint_url', None))"
)


def storage_with(tmp_path, **env):
    environment = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("MEDIA_", "AWS_"))},
        "DJANGO_SETTINGS_MODULE": "messaging_project.settings",
        "VAR_DIR": str(tmp_path),
        **env,
    }
    return subprocess.run(
        [sys.executable, "-c", SHOW],
        cwd=settings.BASE_DIR,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.slow  # Python subprocesses
def test_the_default_is_the_file_system_under_var(tmp_path):
    shown = storage_with(tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.split("\n")[:2] == ["FileSystemStorage", str(tmp_path / "media")]


@pytest.mark.slow
def test_s3_compatible_storage_is_configured_by_the_environment(tmp_path):
    shown = storage_with(
        tmp_path,
        MEDIA_STORAGE="s3",
        AWS_STORAGE_BUCKET_NAME="customer-media",
        AWS_S3_ENDPOINT_URL="https://minio.internal:9000",
    )
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.split("\n")[:3] == [
        "S3Storage",
        "customer-media",
        "https://minio.internal:9000",
    ]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"MEDIA_STORAGE": "s3"}, "AWS_STORAGE_BUCKET_NAME"),
        ({"MEDIA_STORAGE": "ftp"}, "MEDIA_STORAGE must be filesystem or s3"),
        ({"MEDIA_CHUNK_SIZE": "12"}, "MEDIA_CHUNK_SIZE must be at least"),
    ],
)
def test_a_bad_storage_setting_stops_the_service(tmp_path, env, message):
    shown = storage_with(tmp_path, **env)
    assert shown.returncode != 0
    assert message in shown.stderr
