//! What `POST /_api/query` reports about a parsed query: bind parameters in order of first
//! appearance, the collections named statically, and ArangoDB's AST JSON.

use quince_aql::syntax::{ast_json, bind_parameters, collections, parse};
use serde_json::json;

#[test]
fn bind_parameters_in_order_of_first_appearance() {
    let q = parse(
        "FOR doc IN @@collection FILTER doc.@field >= @lower && doc.@field < @upper \
         LIMIT @skip, @limit RETURN { @k: doc }",
    )
    .unwrap();
    assert_eq!(
        bind_parameters(&q),
        vec![
            "@collection",
            "field",
            "lower",
            "upper",
            "skip",
            "limit",
            "k"
        ]
    );
    let q = parse("UPDATE @key WITH @body IN @@c OPTIONS { keepNull: @keep } RETURN NEW").unwrap();
    assert_eq!(bind_parameters(&q), vec!["key", "body", "@c", "keep"]);
    let q = parse("RETURN 1").unwrap();
    assert!(bind_parameters(&q).is_empty());
}

#[test]
fn collections_named_statically() {
    let q = parse(
        "WITH w FOR u IN users FOR v IN @@bound LET x = LENGTH(orders) \
         INSERT { u, x } INTO log RETURN NEW",
    )
    .unwrap();
    assert_eq!(collections(&q), vec!["log", "orders", "users", "w"]);
    // A variable is no collection, in subqueries too; after COLLECT the loop variable is
    // gone, so the name is a collection again (as ArangoDB resolves it).
    let q = parse("LET users = [] FOR u IN users RETURN (FOR x IN u RETURN users)").unwrap();
    assert!(collections(&q).is_empty());
    let q = parse("FOR u IN c COLLECT k = u.k RETURN u").unwrap();
    assert_eq!(collections(&q), vec!["c", "u"]);
}

#[test]
fn ast_json_of_a_simple_query() {
    let q = parse("FOR doc IN @@collection FILTER doc.foo == @bar RETURN doc").unwrap();
    assert_eq!(
        ast_json(&q),
        json!([{
            "type": "root",
            "subNodes": [
                { "type": "for", "subNodes": [
                    { "type": "variable", "name": "doc", "id": 0 },
                    { "type": "datasource parameter", "name": "@collection" }
                ]},
                { "type": "filter", "subNodes": [
                    { "type": "compare ==", "subNodes": [
                        { "type": "attribute access", "name": "foo", "subNodes": [
                            { "type": "reference", "name": "doc", "id": 0 }
                        ]},
                        { "type": "parameter", "name": "bar" }
                    ]}
                ]},
                { "type": "return", "subNodes": [
                    { "type": "reference", "name": "doc", "id": 0 }
                ]}
            ]
        }])
    );
}

#[test]
fn ast_json_of_calls_values_and_subqueries() {
    let q = parse("FOR i IN users LIMIT 2 RETURN LENGTH((RETURN i.a LIKE 'x%'))").unwrap();
    assert_eq!(
        ast_json(&q),
        json!([{
            "type": "root",
            "subNodes": [
                { "type": "for", "subNodes": [
                    { "type": "variable", "name": "i", "id": 0 },
                    { "type": "collection", "name": "users" }
                ]},
                { "type": "limit", "subNodes": [
                    { "type": "value", "value": 0 },
                    { "type": "value", "value": 2 }
                ]},
                { "type": "let", "subNodes": [
                    { "type": "variable", "name": "1", "id": 1 },
                    { "type": "subquery", "subNodes": [
                        { "type": "return", "subNodes": [
                            { "type": "function call", "name": "LIKE", "subNodes": [
                                { "type": "array", "subNodes": [
                                    { "type": "attribute access", "name": "a", "subNodes": [
                                        { "type": "reference", "name": "i", "id": 0 }
                                    ]},
                                    { "type": "value", "value": "x%" }
                                ]}
                            ]}
                        ]}
                    ]}
                ]},
                { "type": "return", "subNodes": [
                    { "type": "function call", "name": "LENGTH", "subNodes": [
                        { "type": "array", "subNodes": [
                            { "type": "reference", "name": "1", "id": 1 }
                        ]}
                    ]}
                ]}
            ]
        }])
    );
}

#[test]
fn ast_json_sort_and_operators() {
    let q = parse("FOR x IN [1] SORT x DESC RETURN -x + 1").unwrap();
    let json = ast_json(&q);
    assert_eq!(
        json[0]["subNodes"][1],
        json!({ "type": "sort", "subNodes": [{ "type": "array", "subNodes": [
            { "type": "sort element", "subNodes": [
                { "type": "reference", "name": "x", "id": 0 },
                { "type": "value", "value": false }
            ]}
        ]}]})
    );
    assert_eq!(json[0]["subNodes"][2]["subNodes"][0]["type"], "plus");
    assert_eq!(
        json[0]["subNodes"][2]["subNodes"][0]["subNodes"][0]["type"],
        "unary minus"
    );
}
