"""A stand-in for the WhatsApp Cloud API: a real HTTP server on loopback, scripted per test.

    with FakeCloudApi() as graph:
        settings.WHATSAPP_GRAPH_URL = graph.url
        graph.reply(400, graph_error(131047, "Re-engagement message"))
        ...
        graph.requests[0].json

Unscripted requests get the Cloud API's success answers: a message id for
`POST /{phone_number_id}/messages`, a media id for an upload to
`POST /{phone_number_id}/media`, and an empty list for a GET. Each scripted
reply can be delayed, be an arbitrary body (an HTML 500 page), reset the connection,
hang up without answering, cut its body short or drip it one byte at a time.

Templates are written on it as on WhatsApp's business management API: `POST
/{business-account-id}/message_templates` answers `{id, status: PENDING, category}` and
keeps the template (a second one of the same name and language is refused with Graph's
error 100, subcode 2388024, as Meta documents it); `POST /{template-id}` edits one (an id
it does not have: Graph's error 100, subcode 33), `DELETE
/{business-account-id}/message_templates?name=...&hsm_id=...` deletes it (one it does not
have: Graph's error 100 with a user title and message; that body is constructed, as no
public capture of it was found), and the template list
(`GET .../message_templates`) shows those written. `templates` holds them by id.

Media a customer sent is put on the stand-in with `add_media(media_id, content, ...)`:
`GET /{media-id}` then answers as Graph does (url, mime_type, sha256, file_size, id) and
the URL serves the bytes, both only to the bearer token given. Its switches are the
failures WhatsApp has: a wrong sha256, a size over the limit, a media id Graph no longer
knows (404), an expired download URL (404 from the download).
"""

import hashlib
import itertools
import json
import socket
import struct
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs

API_VERSION = "v21.0"


@dataclass
class Reply:
    status: int = 200
    json: Any = None
    body: bytes | None = None  # sent as is, instead of json
    content_type: str = "application/json"
    delay: float = 0.0  # seconds before answering
    reset: bool = False  # close the connection with a TCP reset instead of answering
    hang_up: bool = False  # read the request, then close cleanly without a status line
    cut_after: int | None = None  # promise the whole body, send this many bytes, close
    drip: float = 0.0  # send the body one byte at a time, this many seconds apart
    headers: dict[str, str] = field(default_factory=dict)  # more (a redirect's Location)


@dataclass
class RecordedRequest:
    method: str
    path: str  # with the query string
    headers: dict[str, str]
    body: bytes
    json: Any = field(default=None)
    client: tuple = ()  # the sender's (address, port): one per connection


def graph_error(
    code: int,
    message: str,
    *,
    type: str = "OAuthException",
    details: str | None = None,
    fbtrace_id: str = "AbCdEfGhIjKlMnOpQrStUv",
) -> dict[str, Any]:
    """Graph's error object, as the Cloud API sends it."""
    error: dict[str, Any] = {"message": message, "type": type, "code": code}
    if details is not None:
        error["error_data"] = {"messaging_product": "whatsapp", "details": details}
    error["fbtrace_id"] = fbtrace_id
    return {"error": error}


@dataclass
class FakeMedia:
    content: bytes
    mime_type: str
    token: str  # the bearer token both requests must carry
    sha256: str  # what Graph says (hex)
    file_size: int  # what Graph says
    missing: bool = False  # GET /{media-id} answers 404, as for an unknown or deleted id
    expired: bool = False  # the download URL answers 404, as after its five minutes
    delay: float = 0.0  # seconds before the download answers (a slow CDN)
    drip: float = 0.0  # seconds between the download's bytes (a CDN that never finishes)


DOWNLOAD_PATH = "/media-download/"
TEMPLATES_PATH = "/message_templates"


def template_not_found_error(name: str) -> dict[str, Any]:
    """A refusal to delete a template the business account does not have: Graph's error
    100 ("Invalid parameter") with a user title and message. Constructed: no public
    capture of this answer was found, so it carries no subcode of its own."""
    error = graph_error(100, "Invalid parameter")
    error["error"].update(
        {
            "is_transient": False,
            "error_user_title": "Message template not found",
            "error_user_msg": f"The message template {name} wasn't found for this account.",
        }
    )
    return error


def unknown_object_error(object_id: str) -> dict[str, Any]:
    """Graph's answer to a POST on an id it does not know (an edit of a template deleted
    at WhatsApp): error 100, subcode 33, a GraphMethodException."""
    error = graph_error(
        100,
        f"Unsupported post request. Object with ID '{object_id}' does not exist, cannot be "
        "loaded due to missing permissions, or does not support this operation. Please read "
        "the Graph API documentation at https://developers.facebook.com/docs/graph-api",
        type="GraphMethodException",
    )
    error["error"]["error_subcode"] = 33
    return error


def template_exists_error(language: str) -> dict[str, Any]:
    """Graph's refusal of a template whose name already has content in that language
    (Meta's template error codes: 100, subcode 2388024)."""
    error = graph_error(100, "Invalid parameter")
    error["error"].update(
        {
            "error_subcode": 2388024,
            "is_transient": False,
            "error_user_title": "Content in this language already exists",
            "error_user_msg": f"There is already {language} content for this template. "
            "Create a new template and try again.",
        }
    )
    return error


class FakeCloudApi:
    def __init__(self) -> None:
        self.media: dict[str, FakeMedia] = {}
        self.templates: dict[str, dict[str, Any]] = {}  # written templates, by id
        self.requests: list[RecordedRequest] = []
        self.replies: deque[Reply] = deque()
        self.lock = threading.Lock()
        self.ids = itertools.count(1)
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self.handler_class())
        self.server.daemon_threads = True  # a delayed answer never holds up the test run
        self.server.handle_error = lambda request, address: None  # clients that hang up
        # A short poll interval: stop() waits for it, once per test.
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )
        self.stopped = False
        self.on_request = None  # called with each RecordedRequest, in the server's thread

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}/{API_VERSION}"

    def start(self) -> "FakeCloudApi":
        self.thread.start()
        return self

    def stop(self) -> None:
        """Stop answering; afterwards nothing listens on the port (an unreachable channel)."""
        if not self.stopped:
            self.stopped = True
            self.server.shutdown()
            self.server.server_close()

    def __enter__(self) -> "FakeCloudApi":
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.stop()

    def add_media(
        self,
        media_id: str,
        content: bytes,
        *,
        token: str,
        mime_type: str = "image/jpeg",
        sha256: str | None = None,
        file_size: int | None = None,
        missing: bool = False,
        expired: bool = False,
        delay: float = 0.0,
        drip: float = 0.0,
    ) -> FakeMedia:
        """Media the channel holds; `sha256` and `file_size` default to the true ones."""
        media = FakeMedia(
            content=content,
            mime_type=mime_type,
            token=token,
            sha256=sha256 if sha256 is not None else hashlib.sha256(content).hexdigest(),
            file_size=file_size if file_size is not None else len(content),
            missing=missing,
            expired=expired,
            delay=delay,
            drip=drip,
        )
        with self.lock:
            self.media[media_id] = media
        return media

    def reply(self, status: int = 200, json: Any = None, **kwargs: Any) -> None:
        """Script the next answer; several calls queue several answers."""
        with self.lock:
            self.replies.append(Reply(status=status, json=json, **kwargs))

    def fault(self, **kwargs: Any) -> None:
        """Script the next answer by its fields alone (`reset=True`, `hang_up=True`...)."""
        with self.lock:
            self.replies.append(Reply(**kwargs))

    def next_reply(self, request: RecordedRequest) -> Reply:
        if self.on_request is not None:
            self.on_request(request)
        with self.lock:
            self.requests.append(request)
            if self.replies:
                return self.replies.popleft()
        return self.default_reply(request)

    def default_reply(self, request: RecordedRequest) -> Reply:
        templates = self.template_reply(request)
        if templates is not None:
            return templates
        if request.method == "GET":
            media = self.media_reply(request)
            if media is not None:
                return media
        if request.method != "POST":
            return Reply(json={"data": []})
        if request.path.split("?", 1)[0].endswith("/media"):
            # An upload (multipart: messaging_product, type, file): Graph answers its id.
            return Reply(json={"id": str(10**15 + next(self.ids))})
        payload = request.json if isinstance(request.json, dict) else {}
        to = str(payload.get("to", ""))
        message: dict[str, Any] = {"id": f"wamid.FAKE{next(self.ids):06d}"}
        if payload.get("type") == "template":
            message["message_status"] = "accepted"
        return Reply(
            json={
                "messaging_product": "whatsapp",
                "contacts": [{"input": to, "wa_id": to}],
                "messages": [message],
            }
        )

    def template_reply(self, request: RecordedRequest) -> Reply | None:
        """The business management API's template calls (None: not one of them)."""
        path, _, query = request.path.partition("?")
        body = request.json if isinstance(request.json, dict) else {}
        if path.endswith(TEMPLATES_PATH):
            if request.method == "GET" and self.templates:
                return Reply(json={"data": list(self.templates.values()), "paging": {}})
            if request.method == "POST":
                return self.create_template(body)
            if request.method == "DELETE":
                return self.delete_template(parse_qs(query))
            return None
        template_id = path.rsplit("/", 1)[-1]
        if request.method != "POST" or not template_id.isdigit():
            return None  # the object ids of a template edit are digits, as WhatsApp's
        with self.lock:
            if template_id not in self.templates:
                return Reply(400, unknown_object_error(template_id))
            self.templates[template_id].update(
                {key: body[key] for key in ("components", "category") if key in body}
            )
            self.templates[template_id]["status"] = "PENDING"
        return Reply(json={"success": True})

    def create_template(self, body: dict[str, Any]) -> Reply:
        name, language = body.get("name"), body.get("language")
        with self.lock:
            if any((t["name"], t["language"]) == (name, language) for t in self.templates.values()):
                return Reply(400, template_exists_error(str(language)))
            template_id = str(1_000_000_000_000_000 + next(self.ids))
            self.templates[template_id] = {
                "id": template_id,
                "name": name,
                "language": language,
                "status": "PENDING",
                "category": body.get("category"),
                "components": body.get("components") or [],
            }
        return Reply(
            json={"id": template_id, "status": "PENDING", "category": body.get("category")}
        )

    def delete_template(self, query: dict[str, list[str]]) -> Reply:
        name = (query.get("name") or [""])[0]
        hsm_id = (query.get("hsm_id") or [""])[0]
        with self.lock:
            found = [
                template_id
                for template_id, template in self.templates.items()
                if template["name"] == name and hsm_id in ("", template_id)
            ]
            for template_id in found:
                del self.templates[template_id]
        if not found:
            return Reply(400, template_not_found_error(name))
        return Reply(json={"success": True})

    def media_reply(self, request: RecordedRequest) -> Reply | None:
        """Graph's answers for media: the look-up and the download (None: not media)."""
        path = request.path.split("?", 1)[0]
        if path.startswith(DOWNLOAD_PATH):
            media_id, downloading = path[len(DOWNLOAD_PATH) :], True
        elif path.startswith(f"/{API_VERSION}/") and path.count("/") == 2:
            media_id, downloading = path.rsplit("/", 1)[1], False
        else:
            return None
        media = self.media.get(media_id)
        if media is not None and request.headers.get("Authorization") != f"Bearer {media.token}":
            return Reply(401, graph_error(190, "Invalid OAuth access token."))
        if downloading:
            if media is None or media.expired:
                return Reply(404, body=b"URL signature expired", content_type="text/plain")
            return Reply(
                200,
                body=media.content,
                content_type=media.mime_type,
                delay=media.delay,
                drip=media.drip,
            )
        if media is None or media.missing:
            return Reply(
                404,
                graph_error(
                    100,
                    f"Unsupported get request. Object with ID '{media_id}' does not exist.",
                    type="GraphMethodException",
                ),
            )
        host, port = self.server.server_address[:2]
        return Reply(
            json={
                "messaging_product": "whatsapp",
                "url": f"http://{host}:{port}{DOWNLOAD_PATH}{media_id}",
                "mime_type": media.mime_type,
                "sha256": media.sha256,
                "file_size": str(media.file_size),
                "id": media_id,
            }
        )

    def handler_class(self):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format, *args):  # quiet test output
                pass

            def do_GET(self):
                self.answer()

            def do_POST(self):
                self.answer()

            def do_DELETE(self):
                self.answer()

            def answer(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                try:
                    data = json.loads(body) if body else None
                except ValueError:
                    data = None
                recorded = RecordedRequest(
                    method=self.command,
                    path=self.path,
                    headers=dict(self.headers.items()),
                    body=body,
                    json=data,
                    client=self.client_address,
                )
                reply = fake.next_reply(recorded)
                if reply.delay:
                    threading.Event().wait(reply.delay)
                if reply.hang_up:
                    self.close_connection = True  # the server closes the socket (FIN)
                    return
                if reply.reset:
                    # SO_LINGER with a zero timeout makes close() send a TCP RST.
                    self.connection.setsockopt(
                        socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
                    )
                    self.connection.close()
                    self.close_connection = True
                    return
                content = reply.body if reply.body is not None else json.dumps(reply.json).encode()
                self.send_response(reply.status)
                self.send_header("Content-Type", reply.content_type)
                self.send_header("Content-Length", str(len(content)))
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                if reply.drip:
                    self.drip(content, reply.drip)
                    return
                self.wfile.write(content if reply.cut_after is None else content[: reply.cut_after])
                if reply.cut_after is not None:
                    self.wfile.flush()
                    self.close_connection = True

            def drip(self, content: bytes, seconds: float) -> None:
                self.close_connection = True
                try:
                    for byte in content:
                        self.wfile.write(bytes([byte]))
                        self.wfile.flush()
                        threading.Event().wait(seconds)
                except OSError:  # the client gave up
                    pass

        return Handler
