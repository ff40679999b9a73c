"""Curl-level replies of collection schemas and computed values: the exact status codes and
bodies of create and `PUT .../properties` (good and bad), of writes a schema refuses (single,
multi-document with `x-arango-error-codes`, import), and `skipDocumentValidation`, granted to
administrators only."""

import pytest

from conftest import unique
from http_checks import assert_error, assert_success, error_codes_header

RULE = {"properties": {"n": {"type": "number"}}, "required": ["n"]}
REPORTED = {"message": "n must be a number", "level": "strict", "type": "json", "rule": RULE}


@pytest.fixture
def coll(http, db_name):
    name = unique("schema")
    resp = http.post(f"/_db/{db_name}/_api/collection",
                     json={"name": name, "schema": {"rule": RULE, "message": "n must be a number"}})
    body = assert_success(resp, 200)
    assert body["schema"] == REPORTED
    yield name
    http.delete(f"/_db/{db_name}/_api/collection/{name}")


def test_properties_echo_the_schema(http, db_name, coll):
    body = assert_success(http.get(f"/_db/{db_name}/_api/collection/{coll}/properties"), 200)
    assert body["schema"] == REPORTED
    assert body["computedValues"] is None


def test_a_violation_is_400_1620_with_the_message(http, db_name, coll):
    path = f"/_db/{db_name}/_api/document/{coll}"
    body = assert_error(http.post(path, json={"n": "x"}), 400, 1620)
    assert body["errorMessage"] == "n must be a number"
    assert_success(http.post(path, json={"_key": "a", "n": 1}), 202)
    assert_error(http.patch(f"{path}/a", json={"n": []}), 400, 1620)
    assert_error(http.put(f"{path}/a", json={"m": 1}), 400, 1620)
    assert_success(http.delete(f"{path}/a"), 202)


def test_multi_document_errors_are_inline(http, db_name, coll):
    path = f"/_db/{db_name}/_api/document/{coll}"
    resp = http.post(path, json=[{"n": 1}, {"n": "x"}, {}])
    assert resp.status_code == 202
    body = resp.json()
    assert "_key" in body[0]
    assert body[1] == {"error": True, "errorNum": 1620, "errorMessage": "n must be a number"}
    assert body[2]["errorNum"] == 1620
    assert error_codes_header(resp) == {"1620": 2}


def test_import_counts_refused_documents(http, db_name, coll):
    resp = http.post(f"/_db/{db_name}/_api/import?collection={coll}&type=documents&details=true",
                     data='{"n": 1}\n{"n": "x"}\n')
    body = assert_success(resp, 201)
    assert (body["created"], body["errors"]) == (1, 1)
    assert body["details"] == [
        "at position 1: creating document failed with error 'Schema violation', "
        'offending document: {"n":"x"}'
    ]


def test_skip_document_validation_is_for_administrators(http, db_name, coll, sys_db, client):
    path = f"/_db/{db_name}/_api/document/{coll}"
    assert_success(http.post(f"{path}?skipDocumentValidation=true", json={"n": "x"}), 202)
    user = unique("writer")
    sys_db.create_user(user, "pw")
    try:
        sys_db.update_permission(user, "rw", db_name)
        resp = http.request("POST", f"{path}?skipDocumentValidation=true", json={"n": "x"},
                            auth=(user, "pw"))
        assert_error(resp, 400, 1620)
    finally:
        sys_db.delete_user(user)


@pytest.mark.parametrize(
    "schema, message",
    [
        (1, "Schema description is not an object."),
        ({"rule": 1}, "Error when building schema: No valid schema in rule attribute given"),
        ({"rule": {}, "level": "often"},
         "Error when building schema: Valid validation levels are: none, new, moderate, strict"),
        ({"rule": {"type": 3}}, "Error when building schema: invalid rule"),
    ],
)
def test_bad_schemas_are_400_1621(http, db_name, schema, message):
    name = unique("bad")
    resp = http.post(f"/_db/{db_name}/_api/collection", json={"name": name, "schema": schema})
    assert_error(resp, 400, 1621, message_prefix=message)
    assert_error(http.get(f"/_db/{db_name}/_api/collection/{name}"), 404, 1203)


@pytest.mark.parametrize(
    "computed, message",
    [
        ({}, "Computed values description is not an array."),
        ([{"expression": "RETURN 1", "overwrite": True}],
         "Error when validating computedValues: invalid 'computedValues' entry: invalid attribute name"),
        ([{"name": "_id", "expression": "RETURN 1", "overwrite": True}],
         "Error when validating computedValues: invalid 'computedValues' entry: '_id' attribute"),
        ([{"name": "a", "expression": "RETURN 1"}],
         "Error when validating computedValues: invalid 'computedValues' entry: 'overwrite' must be a boolean"),
        ([{"name": "a", "expression": "LET x = 1 RETURN x", "overwrite": True}],
         "Error when validating computedValues: invalid 'computedValues' entry: Node type 'let' is forbidden"),
        ([{"name": "a", "expression": "RETURN @x", "overwrite": True}],
         "Error when validating computedValues: invalid 'computedValues' entry: Invalid bind parameter 'x' found"),
        ([{"name": "a", "expression": "RETURN (", "overwrite": True}],
         "Error when validating computedValues: invalid 'computedValues' entry: AQL: syntax error"),
    ],
)
def test_bad_computed_values_are_400_10(http, db_name, computed, message):
    name = unique("bad")
    resp = http.post(f"/_db/{db_name}/_api/collection", json={"name": name, "computedValues": computed})
    assert_error(resp, 400, 10, message_prefix=message)


def test_put_properties_sets_and_removes_both(http, db_name, coll):
    path = f"/_db/{db_name}/_api/collection/{coll}/properties"
    computed = [{"name": "twice", "expression": "RETURN @doc.n * 2", "overwrite": True}]
    body = assert_success(http.put(path, json={"computedValues": computed, "schema": None}), 200)
    assert body["schema"] is None
    assert body["computedValues"] == [
        {"name": "twice", "expression": "RETURN @doc.n * 2",
         "computeOn": ["insert", "update", "replace"], "overwrite": True,
         "failOnWarning": False, "keepNull": True},
    ]
    resp = http.post(f"/_db/{db_name}/_api/document/{coll}?returnNew=true", json={"n": 21})
    assert assert_success(resp, 202)["new"]["twice"] == 42
    # A bad change changes nothing.
    assert_error(http.put(path, json={"schema": {"rule": {}, "level": 1}}), 400, 1621)
    assert assert_success(http.get(path), 200)["computedValues"][0]["name"] == "twice"
    body = assert_success(http.put(path, json={"computedValues": None}), 200)
    assert body["computedValues"] is None


def test_failing_expression_fails_the_write(http, db_name):
    name = unique("cv")
    computed = [{"name": "q", "expression": "RETURN 1 / @doc.d", "overwrite": True,
                 "failOnWarning": True}]
    assert_success(http.post(f"/_db/{db_name}/_api/collection",
                              json={"name": name, "computedValues": computed}), 200)
    try:
        path = f"/_db/{db_name}/_api/document/{name}"
        body = assert_error(http.post(path, json={"d": 0}), 400, 1562)
        assert "computed values runtime error" in body["errorMessage"]
        assert_success(http.post(path, json={"d": 2}), 202)
    finally:
        http.delete(f"/_db/{db_name}/_api/collection/{name}")
