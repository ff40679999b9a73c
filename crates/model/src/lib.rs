//! Quince's document model: pure rules about ArangoDB documents, with no I/O and no async.
//!
//! What it is: names of databases and collections, document keys and ids, `_rev` values (a
//! hybrid logical clock), key generators, the JSON body parser that rejects duplicate attribute
//! names and bounds nesting, and the merge/patch rules of update (`keepNull`, `mergeObjects`).
//!
//! What it is not: storage or HTTP. Nothing here reads a file or knows a status code beyond the
//! error codes it returns.

pub mod json;
