"""Schemathesis hooks for scripts/schemathesis.sh (loaded through SCHEMATHESIS_HOOKS).

`POST /v1/sessions/import` takes an export's lines as `application/x-ndjson`, a media type
schemathesis has no serializer for: the generated body (a string, as the document describes it)
is sent as its UTF-8 bytes.
"""
import schemathesis


@schemathesis.serializer("application/x-ndjson")
def ndjson(ctx, value):
    if isinstance(value, bytes):
        return value
    return str(value).encode("utf-8")
