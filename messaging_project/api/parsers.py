"""Request bodies are JSON objects; anything else is a malformed body."""

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

MALFORMED_BODY = "Malformed JSON body."


class JSONObjectParser(JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError:  # absurdly deep nesting
            raise ParseError(MALFORMED_BODY) from None
        if not isinstance(data, dict):
            raise ParseError(MALFORMED_BODY)
        return data
