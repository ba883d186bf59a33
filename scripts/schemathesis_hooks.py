"""Schemathesis hooks for scripts/schemathesis.sh (loaded through SCHEMATHESIS_HOOKS). Both shape
the requests schemathesis sends; none reads, rewrites or filters an answer.

`POST /v1/sessions/import` takes an export's lines as `application/x-ndjson`, a media type
schemathesis has no serializer for: the generated body (a string, as the document describes it)
is sent as its UTF-8 bytes.

A retry under an Idempotency-Key answers the first answer whatever else differs (the If-Match, or
a POST's body), as docs/API.md says: that is the key's purpose, and a rule about the requests sent
before, which no document can state. The generator draws few distinct keys, so a request would get
some earlier request's answer; as a client would, each request gets a key of its own (a malformed
one, empty or over 255 bytes, is kept for the checks of negative data). The replay itself is tested in
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
    if isinstance(key, str) and 1 <= len(key.encode("utf-8")) <= 255:
        case.headers["Idempotency-Key"] = uuid.uuid4().hex
