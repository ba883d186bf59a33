"""Schemathesis hooks for scripts/schemathesis.sh (loaded through SCHEMATHESIS_HOOKS).

`POST /v1/sessions/import` takes an export's lines as `application/x-ndjson`, a media type
schemathesis has no serializer for: the generated body (a string, as the document describes it)
is sent as its UTF-8 bytes.

A retry under an Idempotency-Key answers the first answer whatever else differs (the If-Match, or
a POST's body), as docs/API.md says; the generator draws few distinct keys, so a schema-violating
request would get some earlier request's answer. Every well-formed key is made unique (a malformed
one is kept, for the checks of negative data); the replay itself is tested in
ConcurrencyAndRetryTests, SessionEndpointTests and IdempotencySecretTests.
"""
import uuid

import schemathesis


@schemathesis.serializer("application/x-ndjson")
def ndjson(ctx, value):
    if isinstance(value, bytes):
        return value
    return str(value).encode("utf-8")


@schemathesis.hook
def before_call(ctx, case, kwargs):
    key = (case.headers or {}).get("Idempotency-Key")
    if isinstance(key, str) and 1 <= len(key) <= 255 and key.isascii() and key.isprintable():
        case.headers["Idempotency-Key"] = uuid.uuid4().hex
