"""Curl-level authentication: Basic, superuser JWTs (HS256 with the keyfile's secret), 401s with
errorNum 11 and `www-authenticate`, open paths, `/_open/auth`, and a server without auth."""

import base64
import json
import time

import pytest

from conftest import Http, unique
from http_checks import assert_error, assert_success
from quince_server import JWT_SECRET, ROOT_PASSWORD, make_jwt, superuser_jwt


def get(url, path, headers=None, auth=None):
    return Http(url, auth=auth).get(path, headers=headers or {})


def test_no_credentials_is_401(url):
    resp = get(url, "/_api/version")
    assert_error(resp, 401, 11)
    assert "www-authenticate" in resp.headers
    resp = get(url, "/_api/version", headers={"x-omit-www-authenticate": "true"})
    assert_error(resp, 401, 11)
    assert "www-authenticate" not in resp.headers


@pytest.mark.parametrize("path", ["/_api/collection", "/_api/document/x/y", "/_admin/status", "/_admin/metrics"])
def test_protected_paths_need_credentials(url, path):
    assert_error(get(url, path), 401, 11)


def test_wrong_credentials_are_401(url):
    assert_error(get(url, "/_api/version", auth=("root", "wrong")), 401, 11)
    assert_error(get(url, "/_api/version", auth=("nobody", ROOT_PASSWORD)), 401, 11)
    assert_error(get(url, "/_api/version", headers={"Authorization": "Basic !!!notbase64"}), 401, 11)
    assert_error(get(url, "/_api/version", headers={"Authorization": "Digest abc"}), 401, 11)


def test_basic_auth_is_accepted(url):
    body = assert_success(get(url, "/_api/version", auth=("root", ROOT_PASSWORD)), 200)
    assert body["version"].startswith("3.12.")
    header = "basic " + base64.b64encode(f"root:{ROOT_PASSWORD}".encode()).decode()
    assert_success(get(url, "/_api/version", headers={"Authorization": header}), 200)


@pytest.mark.parametrize("scheme", ["bearer", "Bearer", "BEARER"])
def test_superuser_jwt_is_accepted(url, scheme):
    token = superuser_jwt(JWT_SECRET)
    body = assert_success(get(url, "/_api/version", headers={"Authorization": f"{scheme} {token}"}), 200)
    assert body["version"].startswith("3.12.")
    assert_success(get(url, "/_api/database", headers={"Authorization": f"{scheme} {token}"}), 200)


def test_superuser_jwt_sees_missing_database_as_1228(url):
    headers = {"Authorization": f"bearer {superuser_jwt(JWT_SECRET)}"}
    assert_error(get(url, f"/_db/{unique('nodb')}/_api/collection", headers=headers), 404, 1228)


def bad_tokens():
    now = int(time.time())
    good_claims = {"iss": "arangodb", "server_id": "x", "iat": now, "exp": now + 3600}
    return {
        "other-secret": superuser_jwt("another-secret"),
        "alg-none": superuser_jwt(alg="none"),
        "alg-none-signed": make_jwt({"alg": "none", "typ": "JWT"}, good_claims, JWT_SECRET),
        "expired": superuser_jwt(JWT_SECRET, lifetime_s=-120),
        "wrong-iss": make_jwt({"alg": "HS256", "typ": "JWT"}, {**good_claims, "iss": "someone"}, JWT_SECRET),
        "no-user-no-server-id": make_jwt(
            {"alg": "HS256", "typ": "JWT"}, {"iss": "arangodb", "iat": now, "exp": now + 3600}, JWT_SECRET
        ),
        "garbage": "not.a.token",
        "empty": "",
        "tampered": superuser_jwt(JWT_SECRET)[:-4] + "AAAA",
    }


@pytest.mark.parametrize("name", sorted(bad_tokens()))
def test_bad_jwts_are_rejected(url, name):
    token = bad_tokens()[name]
    resp = get(url, "/_api/version", headers={"Authorization": f"bearer {token}"})
    assert_error(resp, 401, 11)


def test_availability_needs_no_auth(url):
    resp = get(url, "/_admin/server/availability")
    body = assert_success(resp, 200)
    assert body["mode"] in ("default", "readonly")


def test_open_auth_issues_a_working_token(url):
    resp = Http(url, auth=None).post("/_open/auth", json={"username": "root", "password": ROOT_PASSWORD})
    body = assert_success(resp, 200)
    token = body["jwt"]
    payload = token.split(".")[1]
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    assert claims["iss"] == "arangodb"
    assert claims["preferred_username"] == "root"
    assert claims["exp"] > claims["iat"] >= int(time.time()) - 60
    assert_success(get(url, "/_api/version", headers={"Authorization": f"bearer {token}"}), 200)


def test_open_auth_wrong_credentials(url):
    resp = Http(url, auth=None).post("/_open/auth", json={"username": "root", "password": "wrong"})
    assert_error(resp, 401, 401)


def test_server_without_authentication(server_factory):
    srv = server_factory(extra_args=["--server.authentication", "false"])
    body = assert_success(get(srv.url, "/_api/version"), 200)
    assert body["version"].startswith("3.12.")
    assert_success(Http(srv.url, auth=None).post("/_api/collection", json={"name": "open"}), 200)
