//! The functions that read a collection through one of its indexes: `NEAR`, `WITHIN`,
//! `WITHIN_RECTANGLE` (a geo index) and `FULLTEXT` (a fulltext index).
//!
//! What it is: each finds the index in the collection's descriptions (the first geo index;
//! the fulltext index over exactly the named attribute), asks it through
//! [`quince_ops::CollectionOps::index_lookup`] (so a stream transaction sees its own writes),
//! then reads each hit's document. `NEAR` and `WITHIN` return documents nearest first (ties
//! by key) and, given a distance attribute name, a copy of each document with the distance
//! in metres under that name; `WITHIN_RECTANGLE` and `FULLTEXT` return documents by key.
//!
//! What it is not: the optimizer's use of a geo index for `SORT DISTANCE(...)`, nor a way to
//! query a collection without the index: as in ArangoDB, a missing index fails the query
//! (1570 geo, 1571 fulltext).
//!
//! Invariants: a bad argument (not a collection name, not a number) warns 1542 and answers
//! `null`; a hit whose document is gone by the time it is read is left out.

use quince_errors::{ArangoError, Result, QUERY_FULLTEXT_INDEX_MISSING, QUERY_GEO_INDEX_MISSING};
use quince_ops::{CollectionOps, FulltextQuery, IndexLookup, IndexType, Rectangle};
use serde_json::Value;

use super::args::{arg, int, invalid};
use super::FunctionContext;

type Out = Result<Value>;

/// `NEAR`'s limit when none (or `null`) is given.
const NEAR_LIMIT_DEFAULT: usize = 100;

/// The collection named by argument 0, or `None` when it is not a string.
fn collection(
    ctx: &dyn FunctionContext,
    args: &[Value],
) -> Result<Option<std::sync::Arc<dyn CollectionOps>>> {
    match arg(args, 0) {
        Value::String(name) => Ok(Some(ctx.database().collection(name)?)),
        _ => Ok(None),
    }
}

/// The id of the collection's first geo index (1570 when it has none).
fn geo_index(collection: &dyn CollectionOps) -> Result<u64> {
    collection
        .indexes()
        .iter()
        .find(|index| index.kind == IndexType::Geo)
        .map(|index| index.id)
        .ok_or_else(|| {
            ArangoError::with_message(
                QUERY_GEO_INDEX_MISSING,
                format!(
                    "no suitable geo index found for geo restriction on '{}'",
                    collection.name()
                ),
            )
        })
}

/// The documents of the hits of `lookup` in index `index`, each with its hit's first value
/// under `distance` when given.
fn documents(
    collection: &dyn CollectionOps,
    index: u64,
    lookup: &IndexLookup,
    distance: Option<&str>,
) -> Out {
    let mut hits: Vec<(String, Option<Value>, Option<Vec<u8>>)> = Vec::new();
    collection.index_lookup(index, lookup, &mut |hit| {
        let carried = hit.document.map(<[u8]>::to_vec);
        hits.push((hit.key.to_owned(), hit.values.first().cloned(), carried));
        true
    })?;
    let mut out = Vec::with_capacity(hits.len());
    for (key, value, carried) in hits {
        let Ok(Some(stored)) = quince_ops::hit_document(collection, &key, carried) else {
            continue;
        };
        let Ok(mut document) = serde_json::from_slice::<Value>(&stored) else {
            continue;
        };
        if let (Some(name), Some(object), Some(value)) = (distance, document.as_object_mut(), value)
        {
            let value = value.as_f64().map_or(value, crate::value::number);
            object.insert(name.to_owned(), value);
        }
        out.push(document);
    }
    Ok(Value::Array(out))
}

/// A number argument, or `None`.
fn number(args: &[Value], i: usize) -> Option<f64> {
    arg(args, i).as_f64()
}

/// The optional distance attribute name at `i`: `Some(None)` when absent or null, `None`
/// when it is not a string.
fn distance_name(args: &[Value], i: usize) -> Option<Option<&str>> {
    match arg(args, i) {
        Value::Null => Some(None),
        Value::String(name) => Some(Some(name.as_str())),
        _ => None,
    }
}

/// `NEAR(collection, latitude, longitude, limit, distanceName)`: the `limit` (default 100)
/// documents nearest to the point.
pub fn near(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let limit = match arg(args, 3) {
        Value::Null => Some(NEAR_LIMIT_DEFAULT),
        Value::Number(_) => Some(int(arg(args, 3)).max(0) as usize),
        _ => None,
    };
    let (Some(lat), Some(lon), Some(limit), Some(distance)) = (
        number(args, 1),
        number(args, 2),
        limit,
        distance_name(args, 4),
    ) else {
        return invalid(ctx, "NEAR");
    };
    let Some(collection) = collection(ctx, args)? else {
        return invalid(ctx, "NEAR");
    };
    let index = geo_index(&*collection)?;
    let lookup = IndexLookup::Near {
        lat,
        lon,
        min_distance: 0.0,
        max_distance: None,
        limit: Some(limit),
    };
    documents(&*collection, index, &lookup, distance)
}

/// `WITHIN(collection, latitude, longitude, radius, distanceName)`: every document within
/// `radius` metres of the point, nearest first.
pub fn within(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let (Some(lat), Some(lon), Some(radius), Some(distance)) = (
        number(args, 1),
        number(args, 2),
        number(args, 3),
        distance_name(args, 4),
    ) else {
        return invalid(ctx, "WITHIN");
    };
    let Some(collection) = collection(ctx, args)? else {
        return invalid(ctx, "WITHIN");
    };
    let index = geo_index(&*collection)?;
    let lookup = IndexLookup::Near {
        lat,
        lon,
        min_distance: 0.0,
        max_distance: Some(radius),
        limit: None,
    };
    documents(&*collection, index, &lookup, distance)
}

/// `WITHIN_RECTANGLE(collection, latitude1, longitude1, latitude2, longitude2)`: every
/// document in the rectangle with these two corners.
pub fn within_rectangle(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let corners = (1..=4)
        .map(|i| number(args, i))
        .collect::<Option<Vec<f64>>>();
    let Some(rectangle) = corners.and_then(|c| Rectangle::from_corners(c[0], c[1], c[2], c[3]))
    else {
        return invalid(ctx, "WITHIN_RECTANGLE");
    };
    let Some(collection) = collection(ctx, args)? else {
        return invalid(ctx, "WITHIN_RECTANGLE");
    };
    let index = geo_index(&*collection)?;
    let lookup = IndexLookup::WithinRectangle {
        rectangle,
        limit: None,
    };
    documents(&*collection, index, &lookup, None)
}

/// `FULLTEXT(collection, attribute, query, limit)`: the documents whose attribute matches the
/// fulltext query, at most `limit` of them (0 or none: all).
pub fn fulltext(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let limit = match arg(args, 3) {
        Value::Null => Some(None),
        Value::Number(_) => Some(usize::try_from(int(arg(args, 3))).ok().filter(|n| *n > 0)),
        _ => None,
    };
    let (Value::String(attribute), Value::String(query), Some(limit)) =
        (arg(args, 1), arg(args, 2), limit)
    else {
        return invalid(ctx, "FULLTEXT");
    };
    let Some(collection) = collection(ctx, args)? else {
        return invalid(ctx, "FULLTEXT");
    };
    let index = collection
        .indexes()
        .iter()
        .find(|index| index.kind == IndexType::Fulltext && index.fields == [attribute.clone()])
        .map(|index| index.id)
        .ok_or_else(|| {
            ArangoError::with_message(
                QUERY_FULLTEXT_INDEX_MISSING,
                format!(
                    "no suitable fulltext index found for fulltext query on '{}'",
                    collection.name()
                ),
            )
        })?;
    let lookup = IndexLookup::Fulltext {
        query: FulltextQuery::parse(query)?,
        limit,
    };
    documents(&*collection, index, &lookup, None)
}
