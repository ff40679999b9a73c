//! Tests of `/_api/document` against a real catalog: statuses, headers and bodies of every form.

pub(crate) mod support;

mod durability;
mod multi;
mod single;
mod writes;
