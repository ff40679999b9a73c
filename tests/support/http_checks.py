"""Assertions shared by the curl-level suites: error bodies and the headers every reply carries.

What it is: small checks on `requests` responses, each written once so every test applies the
same contract (ArangoDB's documentation of request handling and errors:
https://docs.arangodb.com/3.12/develop/http-api/general-request-handling/ and
https://docs.arangodb.com/3.12/develop/error-codes/).

What it is not: a client. Invariant: a check never retries or mutates anything.
"""

from __future__ import annotations

import json

ERROR_KEYS = {"error", "errorNum", "errorMessage", "code"}


def assert_json_content_type(resp) -> None:
    content_type = resp.headers.get("content-type", "")
    assert content_type.startswith("application/json"), content_type


def assert_common_headers(resp) -> None:
    """Headers ArangoDB sends on every reply."""
    headers = resp.headers
    assert headers.get("server") == "ArangoDB", headers
    assert headers.get("x-content-type-options") == "nosniff", headers
    queue_time = headers.get("x-arango-queue-time-seconds")
    assert queue_time is not None, headers
    assert float(queue_time) >= 0.0
    if resp.request.method != "HEAD" and resp.status_code not in (204, 304):
        assert "content-length" in headers, headers
        if "content-encoding" not in headers:
            assert int(headers["content-length"]) == len(resp.content)


def assert_error(resp, status: int, error_num: int, *, message_prefix: str | None = None,
                 extra_keys: set[str] = frozenset()) -> dict:
    """An error reply: exact status, JSON content type, body keys exactly the error keys."""
    assert resp.status_code == status, f"expected {status}/{error_num}, got {resp.status_code}: {resp.text[:500]}"
    assert_json_content_type(resp)
    assert_common_headers(resp)
    body = resp.json()
    assert set(body) == ERROR_KEYS | set(extra_keys), body
    assert body["error"] is True, body
    assert body["code"] == status, body
    assert body["errorNum"] == error_num, body
    assert isinstance(body["errorMessage"], str) and body["errorMessage"], body
    if message_prefix is not None:
        assert body["errorMessage"].startswith(message_prefix), body
    return body


def assert_success(resp, status: int):
    """A success reply: exact status, JSON, and no `errorNum` anywhere at the top level."""
    assert resp.status_code == status, f"expected {status}, got {resp.status_code}: {resp.text[:500]}"
    assert_json_content_type(resp)
    assert_common_headers(resp)
    body = resp.json()
    if isinstance(body, dict):
        assert "errorNum" not in body, body
        if "error" in body:
            assert body["error"] is False, body
    return body


def error_codes_header(resp) -> dict:
    raw = resp.headers.get("x-arango-error-codes")
    assert raw is not None, resp.headers
    value = json.loads(raw)
    assert isinstance(value, dict), raw
    return value
