"""simulate_inbound --media FILE: a sandbox organization tries the whole inbound media
flow (webhook, fetch task, storage, GET /api/chats/{uuid}/media) without WhatsApp."""

import pytest
from django.core.management import CommandError, call_command

from sending.models import Chat, ChatMedia

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 2000


def test_a_photo_is_fetched_and_served(org_a, api, tmp_path, capsys):
    photo = tmp_path / "receipt.png"
    photo.write_bytes(PNG)

    call_command(
        "simulate_inbound", org_a.name, "+14155552671", "my receipt", "--media", str(photo)
    )

    chat = Chat.objects.get(type="inbound")
    assert chat.metadata["type"] == "image"
    assert chat.metadata["image"]["caption"] == "my receipt"
    out = capsys.readouterr().out
    assert f"available at GET /api/chats/{chat.uuid}/media" in out
    record = api.get(f"/api/chats/{chat.uuid}").json()["data"]
    assert record["media"]["status"] == "available"
    response = api.get(f"/api/chats/{chat.uuid}/media")
    assert response["Content-Type"] == "image/png"
    assert b"".join(response.streaming_content) == PNG


def test_a_file_of_no_known_type_is_a_document_under_its_name(org_a, api, tmp_path):
    notes = tmp_path / "notes.xyz"
    notes.write_bytes(b"notes")

    call_command("simulate_inbound", org_a.name, "+14155552671", "--media", str(notes))

    chat = Chat.objects.get(type="inbound")
    media = ChatMedia.objects.get()
    assert (media.kind, media.state) == ("document", "available")
    response = api.get(f"/api/chats/{chat.uuid}/media")
    assert response["Content-Disposition"] == 'attachment; filename="notes.xyz"'


def test_a_voice_note_by_media_type(org_a, tmp_path):
    note = tmp_path / "note.ogg"
    note.write_bytes(b"OggS voice")

    call_command(
        "simulate_inbound",
        org_a.name,
        "+14155552671",
        "--media",
        str(note),
        "--media-type",
        "audio",
    )

    assert ChatMedia.objects.get().kind == "audio"


def test_bad_media_input_is_a_clear_error(org_a, tmp_path):
    with pytest.raises(CommandError, match="No such file"):
        call_command("simulate_inbound", org_a.name, "+14155552671", "--media", "/nonexistent")
    with pytest.raises(CommandError, match="TEXT"):
        call_command("simulate_inbound", org_a.name, "+14155552671")
    big = tmp_path / "big.webp"
    big.write_bytes(b"x" * (500 * 1024 + 1))
    with pytest.raises(CommandError, match="at most"):
        call_command("simulate_inbound", org_a.name, "+14155552671", "--media", str(big))
    assert not Chat.objects.exists()
