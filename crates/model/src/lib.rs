//! Quince's document model: pure rules about ArangoDB documents, with no I/O and no async.
//!
//! What it is: names of databases and collections ([`names`]), document keys and handles
//! ([`key`]), `_rev` values and the hybrid logical clock ([`rev`]), key generators ([`keygen`]),
//! the merge rules of update ([`merge`]), the stored form of a document and its rendering
//! ([`document`]), the JSON body parser that rejects duplicate attribute names and bounds
//! nesting ([`json`]), the one-pass check of an object body that the insert fast route stores
//! without a tree ([`object_text`]), and AQL's type and value order that queries and indexes
//! share ([`order`]).
//!
//! What it is not: storage or HTTP. Nothing here reads a file or knows a status code beyond the
//! error codes it returns.
//!
//! Invariants: every rule here is a pure function of its inputs (the clock and the key
//! generators aside, whose state only moves forward).

pub mod document;
pub mod json;
pub mod key;
pub mod keygen;
pub mod merge;
pub mod names;
pub mod object_text;
pub mod order;
pub mod rev;
