"""Request bodies are JSON objects; anything else is a malformed body."""

import json
from concurrent.futures import ThreadPoolExecutor

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser
from rest_framework.utils.mediatypes import media_type_matches

MALFORMED_BODY = "Malformed JSON body."
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


class JSONObjectParser(JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError:  # absurdly deep nesting
            raise ParseError(MALFORMED_BODY) from None
        if not isinstance(data, dict):
            raise ParseError(MALFORMED_BODY)
        return data
