"""Request bodies: JSON objects, or forms (urlencoded or multipart) read as Laravel reads
them into the same nested object; anything else is a malformed body or a 415."""

import json
from concurrent.futures import ThreadPoolExecutor

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, SuspiciousOperation
from django.http.multipartparser import MultiPartParser as DjangoMultiPartParser
from django.http.multipartparser import MultiPartParserError
from rest_framework import status
from rest_framework.exceptions import APIException, ParseError
from rest_framework.parsers import (
    BaseParser,
    DataAndFiles,
    FormParser,
    JSONParser,
    MultiPartParser,
)
from rest_framework.utils.mediatypes import _MediaType, media_type_matches

MALFORMED_BODY = "Malformed JSON body."
BODY_TOO_LARGE = "The request body is too large."
BODY_METHODS = {"POST", "PUT", "PATCH"}


def is_empty_json_body(request) -> bool:
    """A write that declares a JSON body and sends none. DRF hands an empty body to no
    parser and reads it as `{}`, which would be a list of validation errors (or, for an
    edit, a silent no-op); it is a malformed body like any other text that is not JSON.
    Checked on the Django request, before DRF, by ApiResponseMiddleware."""
    if request.method not in BODY_METHODS:
        return False
    if not media_type_matches(JSONParser.media_type, request.content_type or ""):
        return False
    try:
        return int(request.META.get("CONTENT_LENGTH") or 0) == 0
    except ValueError:  # DRF reads an unreadable length as 0 too
        return True


def loads(data):
    """json.loads, as deep whatever the caller's depth: nesting counts against Python's
    recursion limit together with the frames of the middleware and views below it, so a
    body one middleware more would refuse is parsed again on a fresh thread's stack. A
    body too deep even there still raises RecursionError."""
    try:
        return json.loads(data)
    except RecursionError:
        with ThreadPoolExecutor(max_workers=1) as pool:
            return pool.submit(json.loads, data).result()


class BodyTooLarge(APIException):
    """A body past a limit Django checks while parsing (a multipart form's own fields
    over DATA_UPLOAD_MAX_MEMORY_SIZE): a 413, as the middleware answers a declared one."""

    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = BODY_TOO_LARGE


class JSONObjectParser(JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError:  # absurdly deep nesting
            raise ParseError(MALFORMED_BODY) from None
        if not isinstance(data, dict):
            raise ParseError(MALFORMED_BODY)
        return data


class LargeJSONObjectParser(BaseParser):
    """JSON objects for the paths of settings.LARGE_BODY_PATHS. Not a JSONParser: DRF
    reads a JSONParser's body through `request.body`, which Django refuses past
    DATA_UPLOAD_MAX_MEMORY_SIZE; this one reads the stream, whose length
    ApiResponseMiddleware has already held to LARGE_BODY_MAX_SIZE."""

    media_type = "application/json"

    def parse(self, stream, media_type=None, parser_context=None):
        try:
            data = loads(stream.read().decode())
        except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
            raise ParseError(MALFORMED_BODY) from None
        if not isinstance(data, dict):
            raise ParseError(MALFORMED_BODY)
        return data


# Form bodies, as Laravel reads them (docs/api.md) ------------------------------

# How deep a bracketed name may nest (`a[b][c]`...): the JSON bodies' limit.
MAX_FORM_DEPTH = 8
FORM_BODY = "Malformed form body."


class MalformedForm(ParseError):
    """A form body that cannot be read: answered with its own sentence (the JSON
    bodies' is about JSON)."""


def bracket_path(name: str) -> list[str] | None:
    """`template[components][0][type]` -> ["template", "components", "0", "type"]; `a[]`
    -> ["a", ""] (append). None for a name PHP would not read as such a path."""
    head, bracket, rest = name.partition("[")
    if not bracket:
        return [name]
    path = [head]
    rest = "[" + rest
    while rest:
        if not rest.startswith("["):
            return None
        key, closed, rest = rest[1:].partition("]")
        if not closed:
            return None
        path.append(key)
    return path if head and len(path) <= MAX_FORM_DEPTH + 1 else None


def as_lists(value):
    """Objects whose keys are 0..n-1 become lists, as PHP's arrays become JSON's."""
    if isinstance(value, dict):
        value = {key: as_lists(item) for key, item in value.items()}
        indexes = all(isinstance(key, int) for key in value)
        if value and indexes and sorted(value) == list(range(len(value))):
            return [value[index] for index in range(len(value))]
        return {str(key): item for key, item in value.items()}
    return value


def is_index(key: str) -> bool:
    """A list index as PHP reads one: ASCII digits only (`str.isdigit` also takes `³`,
    which `int` refuses), and short enough for `int` to read."""
    return key.isascii() and key.isdigit() and len(key) <= 9


def nested(pairs) -> dict:
    """A form's (name, value) pairs as the nested object a JSON body would be: bracket
    notation for objects and lists, the last value of a plain name repeated, and an empty
    string read as null (Laravel's ConvertEmptyStringsToNull)."""
    root: dict = {}
    for name, raw in pairs:
        path = bracket_path(name)
        if path is None:
            raise MalformedForm(f"{FORM_BODY} The field name {name[:80]!r} cannot be read.")
        value = None if raw == "" else raw
        node = root
        for depth, part in enumerate(path):
            last = depth == len(path) - 1
            key: str | int = part
            if part == "":  # `a[]`: the next index
                key = len(node)
            elif depth and is_index(part):
                key = int(part)
            if last:
                node[key] = value
            else:
                child = node.get(key)
                if not isinstance(child, dict):
                    child = node[key] = {}
                node = child
    return as_lists(root)


def pairs(query) -> list[tuple[str, str]]:
    return [(name, value) for name, values in query.lists() for value in values]


class LaravelFormParser(FormParser):
    """`application/x-www-form-urlencoded`, nested by bracket notation."""

    def parse(self, stream, media_type=None, parser_context=None):
        try:
            data = super().parse(stream, media_type, parser_context)
        except (SuspiciousOperation, UnicodeDecodeError) as error:
            raise MalformedForm(f"{FORM_BODY} {error}") from None
        return nested(pairs(data))


NO_BOUNDARY = f"{FORM_BODY} A multipart body needs a boundary in its Content-Type."


class LaravelMultiPartParser(MultiPartParser):
    """`multipart/form-data`, nested by bracket notation; files stay in request.FILES
    (and request.data) under their names. Django's limits on fields, files and the
    fields' bytes answer 400 or 413, never a 500."""

    def parse(self, stream, media_type=None, parser_context=None):
        if not _MediaType(media_type or "").params.get("boundary"):
            raise MalformedForm(NO_BOUNDARY)
        try:
            # DRF's own parse turns Django's MultiPartParserError into a ParseError that
            # would read as a JSON body's error; Django's parser is called here instead.
            meta = parser_context["request"].META.copy()
            meta["CONTENT_TYPE"] = media_type
            encoding = parser_context.get("encoding") or settings.DEFAULT_CHARSET
            parser = DjangoMultiPartParser(
                meta, stream, parser_context["request"].upload_handlers, encoding
            )
            data, files = parser.parse()
        except RequestDataTooBig:
            raise BodyTooLarge() from None
        except (SuspiciousOperation, UnicodeDecodeError, MultiPartParserError) as error:
            raise MalformedForm(f"{FORM_BODY} {error}") from None
        return DataAndFiles(nested(pairs(data)), files)
