//! The lookups of a geo index in the local engine: `Near` and `WithinRectangle` read ranges
//! of the index's sorted entries (`[cell, latitude, longitude]`, `quince_ops::geo`).
//!
//! What it is: a rectangle is covered by cell ranges ([`quince_ops::Rectangle::ranges`]) and
//! every entry in them is tested exactly. `Near` without a limit reads the cap of its
//! greatest distance; with a limit it reads caps of growing radius, from
//! [`NEAR_FIRST_RADIUS_M`] and four times larger each round, until one holds `limit` hits or
//! reaches the greatest distance (half the earth's circumference when none is given). A cap's
//! cover holds every point within its radius, so once it holds `limit` hits, no point outside
//! it can be nearer than the `limit`-th.
//!
//! What it is not: incremental. A larger cap reads the smaller one's cells again; with a
//! factor of four the rounds before the last cost about a third of it.
//!
//! Invariants: the hits are those [`IndexLookup::geo_hit`] accepts, in [`IndexLookup::finish`]
//! order, exactly as the fake engine and a transaction's own writes decide them.

use std::ops::Bound;

use quince_errors::Result;
use quince_ops::geo::{cap_ranges, entry_location, HALF_CIRCUMFERENCE_M};
use quince_ops::{IndexHit, IndexLookup};
use serde_json::Value;

use super::{scan_sorted, SortedIndex};

/// The radius of the first cap a limited `Near` reads, in metres.
pub(crate) const NEAR_FIRST_RADIUS_M: f64 = 1_000.0;

/// How much larger each next cap of a limited `Near` is.
const NEAR_GROWTH: f64 = 4.0;

/// Answers a `Near` or `WithinRectangle` lookup (checked to fit the index).
pub(super) fn lookup(
    index: &SortedIndex,
    lookup: &IndexLookup,
    visit: &mut dyn FnMut(IndexHit<'_>) -> bool,
) -> Result<()> {
    let mut hits = match lookup {
        IndexLookup::Near {
            lat,
            lon,
            min_distance,
            max_distance,
            limit,
        } => {
            let max = max_distance.map_or(HALF_CIRCUMFERENCE_M, |m| m.min(HALF_CIRCUMFERENCE_M));
            let mut radius = match limit {
                Some(_) => NEAR_FIRST_RADIUS_M.min(max),
                None => max,
            };
            loop {
                let bounded = IndexLookup::Near {
                    lat: *lat,
                    lon: *lon,
                    min_distance: *min_distance,
                    max_distance: if radius >= max {
                        *max_distance
                    } else {
                        Some(radius)
                    },
                    limit: None,
                };
                let hits = candidates(index, &cap_ranges(*lat, *lon, radius), &bounded);
                if radius >= max || limit.is_some_and(|limit| hits.len() >= limit) {
                    break hits;
                }
                radius = (radius * NEAR_GROWTH).min(max);
            }
        }
        IndexLookup::WithinRectangle { rectangle, .. } => {
            candidates(index, &rectangle.ranges(), lookup)
        }
        _ => unreachable!("checked to be a geo lookup"),
    };
    lookup.finish(&mut hits);
    for (values, key) in &hits {
        if !visit(IndexHit {
            key,
            values,
            document: None,
        }) {
            break;
        }
    }
    Ok(())
}

/// The hits `lookup` gives among the entries whose cells lie in `ranges`.
fn candidates(
    index: &SortedIndex,
    ranges: &[(u64, u64)],
    lookup: &IndexLookup,
) -> Vec<(Box<[Value]>, String)> {
    let mut hits = Vec::new();
    for (low, high) in ranges {
        let range = IndexLookup::Sorted {
            prefix: Vec::new(),
            low: Bound::Included(Value::from(*low)),
            high: Bound::Excluded(Value::from(*high)),
            reverse: false,
        };
        scan_sorted(index, &range, &mut |hit| {
            if let Some((lat, lon)) = entry_location(hit.values) {
                if let Some(values) = lookup.geo_hit(lat, lon) {
                    hits.push((values, hit.key.to_owned()));
                }
            }
            true
        });
    }
    hits
}
