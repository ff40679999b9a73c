"""Collection schemas and computed values through python-arango: creating and configuring
them, the errors writes get (1620 with the schema's message), and values computed on insert,
update and replace, in every write form the driver offers (single, many, import, AQL,
transactions)."""

from __future__ import annotations

import pytest
from arango.exceptions import (
    AQLQueryExecuteError,
    CollectionConfigureError,
    CollectionCreateError,
    DocumentInsertError,
    DocumentReplaceError,
    DocumentUpdateError,
)

from conftest import unique

SCHEMA = {
    "rule": {
        "type": "object",
        "properties": {"name": {"type": "string"}, "age": {"type": "integer", "minimum": 0}},
        "required": ["name"],
        "additionalProperties": False,
    },
    "level": "strict",
    "message": "a person needs a name and no more",
}


@pytest.fixture
def people(db):
    name = unique("people")
    collection = db.create_collection(name, schema=SCHEMA)
    yield collection
    db.delete_collection(name, ignore_missing=True)


def test_create_with_schema_reports_it(people):
    schema = people.properties()["schema"]
    assert schema == {**SCHEMA, "type": "json"}


def test_insert_errors_carry_1620_and_the_message(people):
    people.insert({"name": "Ada", "age": 36})
    with pytest.raises(DocumentInsertError) as err:
        people.insert({"age": 3})
    assert err.value.error_code == 1620
    assert err.value.http_code == 400
    assert err.value.error_message == SCHEMA["message"]
    # System attributes are invisible to `additionalProperties: false`.
    people.insert({"_key": "grace", "name": "Grace"})
    with pytest.raises(DocumentUpdateError) as err:
        people.update({"_key": "grace", "age": -1})
    assert err.value.error_code == 1620
    with pytest.raises(DocumentReplaceError) as err:
        people.replace({"_key": "grace", "nick": "amazing"})
    assert err.value.error_code == 1620
    assert people.get("grace")["name"] == "Grace"
    people.delete("grace")


def test_many_and_import_fail_per_document(people):
    results = people.insert_many([{"name": "a"}, {"nope": 1}, {"name": "c"}])
    assert isinstance(results[1], DocumentInsertError)
    assert results[1].error_code == 1620
    assert not isinstance(results[0], Exception) and not isinstance(results[2], Exception)
    outcome = people.import_bulk([{"name": "d"}, {"name": 4}], details=True, halt_on_error=False)
    assert outcome["created"] == 1 and outcome["errors"] == 1
    # As ArangoDB words it: the error's text, not the schema's message.
    assert "'Schema violation'" in outcome["details"][0]
    with pytest.raises(DocumentInsertError) as err:
        people.import_bulk([{"name": "e"}, {"name": 5}])
    assert err.value.error_code == 1620
    assert people.count() == 3


def test_aql_and_transactions_are_validated(db, people):
    with pytest.raises(AQLQueryExecuteError) as err:
        db.aql.execute(f"INSERT {{age: 1}} INTO {people.name}")
    assert err.value.error_code == 1620
    trx = db.begin_transaction(write=[people.name])
    with pytest.raises(DocumentInsertError) as err:
        trx.collection(people.name).insert({"name": 1})
    assert err.value.error_code == 1620
    trx.collection(people.name).insert({"_key": "t", "name": "in a transaction"})
    trx.commit_transaction()
    assert people.get("t")["name"] == "in a transaction"


def test_levels_and_removal(db, col):
    col.insert({"_key": "old", "age": "not a number"})
    col.configure(schema={**SCHEMA, "level": "moderate"})
    assert col.properties()["schema"]["level"] == "moderate"
    # Moderate: the invalid document may change and stay invalid.
    col.update({"_key": "old", "age": "still not"})
    col.configure(schema={**SCHEMA, "level": "new"})
    col.update({"_key": "old", "extra": True})
    with pytest.raises(DocumentInsertError):
        col.insert({"extra": True})
    col.configure(schema={**SCHEMA, "level": "none"})
    assert col.properties()["schema"]["level"] == "none"
    col.insert({"extra": True})


def test_bad_schemas_and_expressions_are_refused(db, col):
    name = unique("bad")
    with pytest.raises(CollectionCreateError) as err:
        db.create_collection(name, schema={"rule": {"type": "object"}, "level": "often"})
    assert (err.value.http_code, err.value.error_code) == (400, 1621)
    with pytest.raises(CollectionCreateError) as err:
        db.create_collection(
            name,
            computedValues=[{"name": "x", "expression": "RETURN DOCUMENT('a/b')",
                             "overwrite": True}],
        )
    assert (err.value.http_code, err.value.error_code) == (400, 10)
    assert not db.has_collection(name)
    with pytest.raises(CollectionConfigureError) as err:
        col.configure(schema={"rule": "nope"})
    assert err.value.error_code == 1621


def test_computed_values_on_insert_update_and_replace(db, col):
    col.configure(
        computed_values=[
            {"name": "createdBy", "expression": "RETURN 'quince'", "overwrite": True,
             "computeOn": ["insert"]},
            {"name": "fullName", "expression": "RETURN CONCAT_SEPARATOR(' ', @doc.first, @doc.last)",
             "overwrite": True},
            {"name": "modified", "expression": "RETURN 'yes'", "overwrite": False,
             "computeOn": ["update", "replace"]},
        ]
    )
    reported = col.properties()["computedValues"]
    assert [v["name"] for v in reported] == ["createdBy", "fullName", "modified"]
    assert reported[1]["computeOn"] == ["insert", "update", "replace"]
    assert reported[0]["keepNull"] is True and reported[0]["failOnWarning"] is False

    col.insert({"_key": "p", "first": "Paula", "last": "Plant", "fullName": "ignored"})
    doc = col.get("p")
    assert (doc["createdBy"], doc["fullName"]) == ("quince", "Paula Plant")
    assert "modified" not in doc
    col.update({"_key": "p", "last": "Pine"})
    doc = col.get("p")
    assert (doc["fullName"], doc["modified"]) == ("Paula Pine", "yes")
    col.replace({"_key": "p", "first": "P", "last": "Q", "modified": "by me"})
    doc = col.get("p")
    assert (doc["fullName"], doc["modified"]) == ("P Q", "by me")
    assert "createdBy" not in doc
    # AQL writes compute them too.
    cursor = db.aql.execute(f"INSERT {{first: 'A', last: 'B'}} INTO {col.name} RETURN NEW")
    assert next(cursor)["fullName"] == "A B"
    col.configure(computed_values=[])
    assert col.properties().get("computedValues") is None
