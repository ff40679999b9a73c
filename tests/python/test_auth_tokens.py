"""Curl-level authentication of normal users: malformed headers and wrong schemes, user JWTs
(forged, foreign, expired, after a password change, permission change or deletion), access
tokens as Basic passwords, missing databases, duplicate keys in user documents, failed-login
metrics, secret rotation with a folder of keys, and the authentication switches."""

import base64
import hashlib
import hmac
import json
import time

import pytest
import requests
from arango.exceptions import JWTExpiredError, ServerConnectionError

from conftest import Http, unique
from http_checks import assert_error, assert_success
from quince_server import JWT_SECRET, ROOT_PASSWORD, make_jwt, superuser_jwt

PASSWORD = "tok-pw"


@pytest.fixture
def account(sys_db, db_name):
    """A user with `rw` on the module's database."""
    name = unique("tok_user")
    sys_db.create_user(name, PASSWORD)
    sys_db.update_permission(name, "rw", db_name)
    yield name
    sys_db.delete_user(name, ignore_missing=True)


def bearer(token):
    return {"Authorization": f"bearer {token}"}


def login(url, user, password=PASSWORD, prefix=""):
    resp = Http(url, auth=None).post(f"{prefix}/_open/auth", json={"username": user, "password": password})
    return resp


def claims_of(token):
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


@pytest.mark.parametrize(
    "value",
    [
        "Basic",
        "Basic ",
        "Basic %%%",
        "Basic " + base64.b64encode(b"\xff\xfe:x").decode(),
        "Bearer",
        "Bearer ",
        "Bearer a.b",
        "Token abc",
        "Negotiate abc",
        "BasicXYZ",
        "basic" + base64.b64encode(b"root:x").decode(),
    ],
)
def test_malformed_authorization_headers_are_401(url, value):
    resp = Http(url, auth=None).get("/_api/version", headers={"Authorization": value})
    assert_error(resp, 401, 11)


def test_user_tokens_from_open_auth_with_and_without_the_prefix(url, db_name, account):
    for prefix in ("", f"/_db/{db_name}"):
        body = assert_success(login(url, account, prefix=prefix), 200)
        claims = claims_of(body["jwt"])
        assert claims["preferred_username"] == account and claims["iss"] == "arangodb"
        assert claims["exp"] - claims["iat"] == 3600
        resp = Http(url, auth=None).get(f"/_db/{db_name}/_api/collection", headers=bearer(body["jwt"]))
        assert_success(resp, 200)
    assert_error(login(url, account, "wrong"), 401, 401)
    assert_error(login(url, unique("nobody"), "x"), 401, 401)
    assert_error(Http(url, auth=None).post("/_open/auth", json={"username": account}), 400, 400)
    # Renewal gives a fresh, working token.
    token = login(url, account).json()["jwt"]
    renewed = assert_success(Http(url, auth=None).post("/_open/auth/renew", headers=bearer(token)), 200)["jwt"]
    assert_success(Http(url, auth=None).get(f"/_db/{db_name}/_api/collection", headers=bearer(renewed)), 200)


def test_forged_and_foreign_user_tokens_are_refused(url, db_name, account):
    now = int(time.time())
    claims = {"iss": "arangodb", "preferred_username": account, "iat": now, "exp": now + 600}
    forged = {
        "other-secret": make_jwt({"alg": "HS256", "typ": "JWT"}, claims, "not-the-secret"),
        "alg-none": make_jwt({"alg": "none", "typ": "JWT"}, claims, None),
        "alg-rs256": make_jwt({"alg": "RS256", "typ": "JWT"}, claims, JWT_SECRET),
        "alg-hs512": make_jwt({"alg": "HS512", "typ": "JWT"}, claims, JWT_SECRET),
        "expired": make_jwt({"alg": "HS256", "typ": "JWT"}, {**claims, "exp": now - 5}, JWT_SECRET),
        "unknown-user": make_jwt(
            {"alg": "HS256", "typ": "JWT"}, {**claims, "preferred_username": unique("ghost")}, JWT_SECRET
        ),
    }
    for name, token in forged.items():
        resp = Http(url, auth=None).get(f"/_db/{db_name}/_api/collection", headers=bearer(token))
        assert resp.status_code == 401, name
        assert resp.json()["errorNum"] == 11, name
    # A user token made with the real secret (as ArangoDB's tools can) is accepted.
    good = make_jwt({"alg": "HS256", "typ": "JWT"}, claims, JWT_SECRET)
    assert_success(Http(url, auth=None).get(f"/_db/{db_name}/_api/collection", headers=bearer(good)), 200)


def test_tokens_die_with_password_and_permission_changes_and_deletion(url, sys_db, db_name, account):
    path = f"/_db/{db_name}/_api/collection"
    token = login(url, account).json()["jwt"]
    assert_success(Http(url, auth=None).get(path, headers=bearer(token)), 200)
    sys_db.update_user(account, password="changed-pw")
    assert_error(Http(url, auth=None).get(path, headers=bearer(token)), 401, 11)
    assert_error(Http(url, auth=(account, PASSWORD)).get(path), 401, 11)

    token = login(url, account, "changed-pw").json()["jwt"]
    assert_success(Http(url, auth=None).get(path, headers=bearer(token)), 200)
    sys_db.update_permission(account, "ro", db_name)
    assert_error(Http(url, auth=None).get(path, headers=bearer(token)), 401, 11)

    token = login(url, account, "changed-pw").json()["jwt"]
    sys_db.delete_user(account)
    assert_error(Http(url, auth=None).get(path, headers=bearer(token)), 401, 11)
    # A new user of the same name does not inherit the old tokens.
    sys_db.create_user(account, "changed-pw")
    sys_db.update_permission(account, "rw", db_name)
    assert_error(Http(url, auth=None).get(path, headers=bearer(token)), 401, 11)


def test_driver_jwt_user_refreshes_after_expiry_and_superuser_tokens_expire(client, db_name, account):
    db = client.db(db_name, username=account, password=PASSWORD, auth_method="jwt")
    expired = superuser_jwt(JWT_SECRET, lifetime_s=-100)
    db.conn._token = expired
    db.conn._auth_header = f"bearer {expired}"
    assert isinstance(db.collections(), list), "the driver logs in again after a 401/11"
    with pytest.raises(ServerConnectionError):
        client.db("_system", superuser_token=expired, verify=True)
    with pytest.raises(JWTExpiredError):
        client.db("_system", user_token=expired)
    su = client.db("_system", superuser_token=superuser_jwt(JWT_SECRET), verify=True)
    assert isinstance(su.version(), str)
    assert db_name in su.databases()


def test_missing_database_is_401_for_users_and_404_for_root(url, account):
    missing = unique("no_such_db")
    user = Http(url, auth=(account, PASSWORD))
    assert user.head(f"/_db/{missing}/_api/collection").status_code == 401
    assert_error(user.get(f"/_db/{missing}/_api/collection"), 401, 11)
    assert_error(Http(url).get(f"/_db/{missing}/_api/collection"), 404, 1228)
    # So does a superuser.
    headers = bearer(superuser_jwt(JWT_SECRET))
    assert_error(Http(url, auth=None).get(f"/_db/{missing}/_api/version", headers=headers), 404, 1228)


def test_duplicate_keys_in_user_documents_are_rejected(url, http, sys_db):
    name = unique("dup")
    body = '{"user": "%s", "passwd": "a", "passwd": "b"}' % name
    resp = http.post("/_api/user", data=body, headers={"content-type": "application/json"})
    assert_error(resp, 400, 600)
    assert not sys_db.has_user(name)
    sys_db.create_user(name, "a")
    try:
        resp = http.patch(f"/_api/user/{name}", data='{"active": true, "active": false}')
        assert_error(resp, 400, 600)
        resp = http.put(f"/_api/user/{name}/database/_system", data='{"grant": "none", "grant": "rw"}')
        assert_error(resp, 400, 600)
        assert sys_db.permission(name, "_system") == "none"
    finally:
        sys_db.delete_user(name)


def test_access_tokens_work_as_basic_passwords(url, sys_db, db_name, account):
    user_http = Http(url, auth=(account, PASSWORD))
    created = assert_success(
        user_http.post(f"/_api/token/{account}", json={"name": "ci", "valid_until": int(time.time()) + 600}), 200
    )
    token = created["token"]
    assert token.startswith("v1.") and created["active"] is True and created["name"] == "ci"
    assert_error(
        user_http.post(f"/_api/token/{account}", json={"name": "ci", "valid_until": int(time.time()) + 600}),
        409,
        1207,
    )
    listed = assert_success(user_http.get(f"/_api/token/{account}"), 200)["tokens"]
    assert [t["name"] for t in listed] == ["ci"]
    assert "token" not in listed[0] and listed[0]["fingerprint"] == created["fingerprint"]
    path = f"/_db/{db_name}/_api/collection"
    assert_success(Http(url, auth=(account, token)).get(path), 200)
    assert_success(Http(url, auth=("", token)).get(path), 200)
    raw = "Basic " + base64.b64encode(token.encode()).decode()
    assert_success(Http(url, auth=None).get(path, headers={"Authorization": raw}), 200)
    assert_error(Http(url, auth=("root", token)).get(path), 401, 11)
    # Another user cannot see or make tokens for this one.
    other = unique("other")
    sys_db.create_user(other, "o")
    try:
        assert Http(url, auth=(other, "o")).get(f"/_api/token/{account}").status_code == 403
    finally:
        sys_db.delete_user(other)
    assert_success(user_http.delete(f"/_api/token/{account}/{created['id']}"), 200)
    assert_error(Http(url, auth=(account, token)).get(path), 401, 11)
    assert user_http.delete(f"/_api/token/{account}/{created['id']}").status_code == 404


def test_a_token_made_with_only_a_name_does_not_expire(url, db_name, account):
    user_http = Http(url, auth=(account, PASSWORD))
    created = assert_success(user_http.post(f"/_api/token/{account}", json={"name": "forever"}), 200)
    assert created["valid_until"] == 0 and created["active"] is True
    listed = assert_success(user_http.get(f"/_api/token/{account}"), 200)["tokens"]
    assert [(t["name"], t["valid_until"], t["active"]) for t in listed] == [("forever", 0, True)]
    assert_success(Http(url, auth=("", created["token"])).get(f"/_db/{db_name}/_api/collection"), 200)
    # `null` means the same; a bad type is refused.
    assert assert_success(user_http.post(f"/_api/token/{account}", json={"name": "n", "valid_until": None}), 200)["valid_until"] == 0
    assert_error(user_http.post(f"/_api/token/{account}", json={"name": "x", "valid_until": "soon"}), 400, 400)
    assert_error(user_http.post(f"/_api/token/{account}", json={"valid_until": int(time.time()) + 60}), 400, 400)


def test_open_auth_takes_an_access_token_as_the_password(url, db_name, account, sys_db):
    token = assert_success(
        Http(url, auth=(account, PASSWORD)).post(f"/_api/token/{account}", json={"name": "login"}), 200
    )["token"]
    for username in ("", account):
        body = assert_success(login(url, username, token), 200)
        assert claims_of(body["jwt"])["preferred_username"] == account
        resp = Http(url, auth=None).get(f"/_db/{db_name}/_api/collection", headers=bearer(body["jwt"]))
        assert_success(resp, 200)
    # Not for another user, root included.
    other = unique("other")
    sys_db.create_user(other, "o")
    try:
        assert_error(login(url, other, token), 401, 401)
        assert_error(login(url, "root", token), 401, 401)
    finally:
        sys_db.delete_user(other)
    # An empty username with a password is no login, and a token's lookalike is not a token.
    assert_error(login(url, "", PASSWORD), 401, 401)
    assert_error(login(url, "", "v1." + "0" * 64), 401, 401)


def test_access_tokens_through_the_driver(sys_db, account):
    token = sys_db.create_access_token(account, "drv", int(time.time()) + 600)
    assert token["token"].startswith("v1.")
    assert [t["name"] for t in sys_db.list_access_tokens(account)] == ["drv"]
    sys_db.delete_access_token(account, token["id"])
    assert sys_db.list_access_tokens(account) == []


def test_failed_logins_are_counted_and_logged_without_the_password(server, url):
    def failures():
        text = Http(url).get("/_admin/metrics").text
        line = next(l for l in text.splitlines() if l.startswith("quince_auth_failures_total "))
        return float(line.split()[1])

    before = failures()
    secret_guess = "guess-" + unique("pw")
    Http(url, auth=("root", secret_guess)).get("/_api/version")
    login(url, "root", secret_guess)
    assert failures() >= before + 2
    log = server.log_path.read_text(errors="replace")
    assert "auth.failed" in log
    assert secret_guess not in log


def test_secret_folder_rotation(server_factory, tmp_path):
    folder = tmp_path / "secrets"
    folder.mkdir()
    (folder / "1-new").write_text("new-secret\n")
    (folder / "2-old").write_text(JWT_SECRET)
    srv = server_factory(jwt=False, extra_args=["--server.jwt-secret-folder", str(folder)])
    for secret in ("new-secret", JWT_SECRET):
        assert_success(Http(srv.url, auth=None).get("/_api/version", headers=bearer(superuser_jwt(secret))), 200)
    assert_error(Http(srv.url, auth=None).get("/_api/version", headers=bearer(superuser_jwt("other"))), 401, 11)
    token = login(srv.url, "root", ROOT_PASSWORD).json()["jwt"]
    header, payload, signature = token.split(".")
    expected = hmac.new(b"new-secret", f"{header}.{payload}".encode(), hashlib.sha256).digest()
    assert base64.urlsafe_b64encode(expected).rstrip(b"=").decode() == signature, "the first file signs"


def test_authentication_off_makes_everyone_root_and_hides_open_auth(server_factory):
    srv = server_factory(extra_args=["--server.authentication", "false"])
    anonymous = Http(srv.url, auth=None)
    assert_error(anonymous.post("/_open/auth", json={"username": "root", "password": ROOT_PASSWORD}), 404, 404)
    assert_success(anonymous.post("/_api/user", json={"user": "u1", "passwd": "p"}), 201)
    assert_success(anonymous.get("/_api/database"), 200)


def test_authentication_system_only(url, server_factory):
    # Default (true): paths outside `/_` need no credentials, so an unknown one is plain 404.
    assert Http(url, auth=None).get("/not-a-system-path").status_code == 404
    assert Http(url, auth=None).get("/_api/version").status_code == 401
    srv = server_factory(extra_args=["--server.authentication-system-only", "false"])
    assert_error(Http(srv.url, auth=None).get("/not-a-system-path"), 401, 11)
    assert requests.get(srv.url + "/_admin/server/availability", timeout=30).status_code == 200
