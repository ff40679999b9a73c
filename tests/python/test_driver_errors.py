"""Errors as python-arango sees them: exact error bodies, status text, auth failures, JWTs."""

import pytest
from arango.exceptions import (
    CollectionListError,
    DocumentInsertError,
    ServerConnectionError,
    ServerVersionError,
)

from quince_server import JWT_SECRET, ROOT_PASSWORD, superuser_jwt


def test_unique_violation_error_is_exact(col):
    col.insert({"_key": "dup"})
    with pytest.raises(DocumentInsertError) as err:
        col.insert({"_key": "dup"})
    exc = err.value
    assert exc.http_code == 409
    assert exc.http_method == "post"
    assert exc.response.status_text == "Conflict"
    assert exc.error_code == 1210
    assert exc.error_message.startswith("unique constraint violated")
    assert set(exc.response.body) == {"code", "error", "errorNum", "errorMessage"}
    assert exc.response.body["code"] == 409
    assert exc.response.body["error"] is True
    assert f"/_api/document/{col.name}" in exc.url


def test_not_found_status_text(col):
    with pytest.raises(Exception) as err:
        col.update({"_key": "missing", "v": 1})
    assert err.value.http_code == 404
    assert err.value.response.status_text == "Not Found"
    assert err.value.error_message == "document not found"


def test_wrong_password_is_rejected(client):
    with pytest.raises(ServerConnectionError):
        client.db("_system", username="root", password="wrong", verify=True)
    bad = client.db("_system", username="root", password="wrong")
    with pytest.raises(CollectionListError) as err:
        bad.collections()
    assert err.value.http_code == 401
    assert err.value.error_code == 11


def test_unknown_user_is_rejected(client):
    bad = client.db("_system", username="nobody", password="x")
    with pytest.raises(ServerVersionError) as err:
        bad.version()
    assert err.value.http_code == 401
    assert err.value.error_code == 11


def test_basic_auth_with_verify(client):
    db = client.db("_system", username="root", password=ROOT_PASSWORD, verify=True)
    assert db.version().startswith("3.12.")


def test_superuser_jwt_accepted(client):
    db = client.db("_system", superuser_token=superuser_jwt(JWT_SECRET), verify=True)
    assert db.version().startswith("3.12.")
    assert "_system" in db.databases()


def test_superuser_jwt_with_wrong_secret_rejected(client):
    db = client.db("_system", superuser_token=superuser_jwt("not-the-secret"))
    with pytest.raises(ServerVersionError) as err:
        db.version()
    assert err.value.http_code == 401
    assert err.value.error_code == 11


def test_expired_superuser_jwt_rejected(client):
    db = client.db("_system", superuser_token=superuser_jwt(JWT_SECRET, lifetime_s=-60))
    with pytest.raises(ServerVersionError) as err:
        db.version()
    assert err.value.http_code == 401
    assert err.value.error_code == 11


def test_jwt_auth_method_via_open_auth(client):
    db = client.db("_system", username="root", password=ROOT_PASSWORD, auth_method="jwt")
    assert db.version().startswith("3.12.")


def test_request_compression_deflate(url, db_name, col):
    from arango import ArangoClient
    from arango.http import DeflateRequestCompression

    compressing = ArangoClient(
        hosts=url, request_compression=DeflateRequestCompression(threshold=1, level=6)
    )
    db = compressing.db(db_name, username="root", password=ROOT_PASSWORD)
    big = {"_key": "deflated", "text": "quince " * 2000}
    db.collection(col.name).insert(big)
    assert col.get("deflated")["text"] == big["text"]
