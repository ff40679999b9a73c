//! Geo functions without an index: constructors (`GEO_POINT`, `GEO_MULTIPOINT`,
//! `GEO_LINESTRING`, `GEO_MULTILINESTRING`, `GEO_POLYGON`, `GEO_MULTIPOLYGON`), measures
//! (`DISTANCE`, `GEO_DISTANCE`, `GEO_AREA`, `GEO_IN_RANGE`) and predicates (`GEO_CONTAINS`,
//! `GEO_INTERSECTS`, `GEO_EQUALS`, `IS_IN_POLYGON`).
//!
//! What it is: GeoJSON in, numbers and booleans out. Distances are on a sphere of radius
//! 6371000 m (haversine, as ArangoDB's `DISTANCE`), or on the WGS84 ellipsoid when asked;
//! areas on that sphere or ellipsoid; containment and intersection use the `geo` crate on
//! longitude/latitude coordinates (planar edges, where ArangoDB's S2 uses great circles:
//! results differ only for edges long enough to bend noticeably).
//!
//! What it is not: `NEAR`, `WITHIN`, `WITHIN_RECTANGLE` (they read a geo index:
//! `indexed.rs`) nor ArangoSearch's geo functions.
//!
//! Invariants: invalid coordinates or GeoJSON warn 1542 and answer `null`.

use geo::{
    Centroid, Contains, Coord, Distance, Geodesic, GeodesicArea, Geometry, Intersects, LineString,
    Point, Polygon,
};
use quince_errors::Result;
use serde_json::{json, Value};

use super::args::{arg, flag, invalid};
use super::FunctionContext;
use crate::value::{number, to_string_value};

type Out = Result<Value>;

/// ArangoDB's earth radius in meters.
const EARTH_RADIUS_M: f64 = 6_371_000.0;

use quince_ops::geo::{polygon, position, positions};

/// A GeoJSON object (or a `[longitude, latitude]` pair) as a geometry.
fn geometry(value: &Value) -> Option<Geometry<f64>> {
    if value.is_array() {
        return position(value).map(|c| Geometry::Point(Point(c)));
    }
    quince_ops::geo::geometry(value)
}

pub fn geo_point(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let pair = json!([arg(args, 0), arg(args, 1)]);
    match position(&pair) {
        Some(_) => Ok(json!({ "type": "Point", "coordinates": pair })),
        None => invalid(ctx, "GEO_POINT"),
    }
}

fn constructor(
    ctx: &mut dyn FunctionContext,
    args: &[Value],
    name: &str,
    kind: &str,
    valid: impl Fn(&Value) -> bool,
) -> Out {
    let coordinates = arg(args, 0);
    if !valid(coordinates) {
        return invalid(ctx, name);
    }
    Ok(json!({ "type": kind, "coordinates": coordinates }))
}

pub fn geo_multipoint(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    constructor(ctx, args, "GEO_MULTIPOINT", "MultiPoint", |c| {
        positions(c).is_some_and(|p| p.len() >= 2)
    })
}

pub fn geo_linestring(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    constructor(ctx, args, "GEO_LINESTRING", "LineString", |c| {
        positions(c).is_some_and(|p| p.len() >= 2)
    })
}

pub fn geo_multilinestring(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    constructor(ctx, args, "GEO_MULTILINESTRING", "MultiLineString", |c| {
        c.as_array().is_some_and(|lines| {
            !lines.is_empty()
                && lines
                    .iter()
                    .all(|l| positions(l).is_some_and(|p| p.len() >= 2))
        })
    })
}

/// `GEO_POLYGON(ring)` or `GEO_POLYGON([outer, holes...])`.
pub fn geo_polygon(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let value = arg(args, 0);
    let rings = if position(value.get(0).unwrap_or(&Value::Null)).is_some() {
        json!([value])
    } else {
        value.clone()
    };
    match polygon(&rings) {
        Some(_) => Ok(json!({ "type": "Polygon", "coordinates": rings })),
        None => invalid(ctx, "GEO_POLYGON"),
    }
}

pub fn geo_multipolygon(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    constructor(ctx, args, "GEO_MULTIPOLYGON", "MultiPolygon", |c| {
        c.as_array()
            .is_some_and(|p| p.len() >= 2 && p.iter().all(|p| polygon(p).is_some()))
    })
}

/// The great-circle distance in meters (haversine on ArangoDB's sphere).
fn haversine(a: Coord<f64>, b: Coord<f64>) -> f64 {
    quince_ops::geo::distance_m(a.y, a.x, b.y, b.x)
}

/// `DISTANCE(latitude1, longitude1, latitude2, longitude2)`.
pub fn distance(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let values: Option<Vec<f64>> = args.iter().map(Value::as_f64).collect();
    let Some([lat1, lon1, lat2, lon2]) = values.and_then(|v| <[f64; 4]>::try_from(v).ok()) else {
        return invalid(ctx, "DISTANCE");
    };
    Ok(number(haversine(
        Coord { x: lon1, y: lat1 },
        Coord { x: lon2, y: lat2 },
    )))
}

/// Whether the ellipsoid argument asks for WGS84; `None` for an unknown name.
fn wgs84(value: &Value) -> Option<bool> {
    match value {
        Value::Null => Some(false),
        other => match to_string_value(other).as_str() {
            "sphere" => Some(false),
            "wgs84" => Some(true),
            _ => None,
        },
    }
}

fn centroid_distance(a: &Geometry<f64>, b: &Geometry<f64>, wgs84: bool) -> Option<f64> {
    let (ca, cb) = (a.centroid()?, b.centroid()?);
    Some(if wgs84 {
        Geodesic.distance(ca, cb)
    } else {
        haversine(ca.0, cb.0)
    })
}

/// `GEO_DISTANCE(a, b, ellipsoid)`: between the centroids of two geometries.
pub fn geo_distance(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let (Some(a), Some(b), Some(wgs)) = (
        geometry(arg(args, 0)),
        geometry(arg(args, 1)),
        wgs84(arg(args, 2)),
    ) else {
        return invalid(ctx, "GEO_DISTANCE");
    };
    match centroid_distance(&a, &b, wgs) {
        Some(d) => Ok(number(d)),
        None => invalid(ctx, "GEO_DISTANCE"),
    }
}

/// The area of one ring on the sphere (Chamberlain and Duquette), unsigned.
fn ring_area(ring: &LineString<f64>) -> f64 {
    let coords = &ring.0;
    let mut total = 0.0;
    for pair in coords.windows(2) {
        let (a, b) = (pair[0], pair[1]);
        total += (b.x - a.x).to_radians() * (2.0 + a.y.to_radians().sin() + b.y.to_radians().sin());
    }
    (total * EARTH_RADIUS_M * EARTH_RADIUS_M / 2.0).abs()
}

fn sphere_area(polygon: &Polygon<f64>) -> f64 {
    ring_area(polygon.exterior()) - polygon.interiors().iter().map(ring_area).sum::<f64>()
}

/// `GEO_AREA(polygon, ellipsoid)`: square meters; 0 for points and lines.
pub fn geo_area(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let (Some(shape), Some(wgs)) = (geometry(arg(args, 0)), wgs84(arg(args, 1))) else {
        return invalid(ctx, "GEO_AREA");
    };
    let area = match (&shape, wgs) {
        (Geometry::Polygon(p), false) => sphere_area(p),
        (Geometry::MultiPolygon(m), false) => m.0.iter().map(sphere_area).sum(),
        (Geometry::Polygon(p), true) => p.geodesic_area_unsigned(),
        (Geometry::MultiPolygon(m), true) => m.geodesic_area_unsigned(),
        _ => 0.0,
    };
    Ok(number(area))
}

fn pair(
    ctx: &mut dyn FunctionContext,
    args: &[Value],
    name: &str,
) -> Option<(Geometry<f64>, Geometry<f64>)> {
    match (geometry(arg(args, 0)), geometry(arg(args, 1))) {
        (Some(a), Some(b)) => Some((a, b)),
        _ => {
            ctx.warn(crate::value::Warning::invalid_argument(name));
            None
        }
    }
}

/// `GEO_CONTAINS(a, b)`: `b` lies entirely within the polygon(s) `a`.
pub fn geo_contains(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let Some((a, b)) = pair(ctx, args, "GEO_CONTAINS") else {
        return Ok(Value::Null);
    };
    Ok(match &a {
        Geometry::Polygon(_) | Geometry::MultiPolygon(_) => Value::Bool(a.contains(&b)),
        _ => return invalid(ctx, "GEO_CONTAINS"),
    })
}

pub fn geo_intersects(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let Some((a, b)) = pair(ctx, args, "GEO_INTERSECTS") else {
        return Ok(Value::Null);
    };
    Ok(Value::Bool(a.intersects(&b)))
}

pub fn geo_equals(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let Some((a, b)) = pair(ctx, args, "GEO_EQUALS") else {
        return Ok(Value::Null);
    };
    Ok(Value::Bool(a == b))
}

/// `GEO_IN_RANGE(a, b, low, high, includeLow, includeHigh)`: the centroid distance in range.
pub fn geo_in_range(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let Some((a, b)) = pair(ctx, args, "GEO_IN_RANGE") else {
        return Ok(Value::Null);
    };
    let (Some(low), Some(high)) = (arg(args, 2).as_f64(), arg(args, 3).as_f64()) else {
        return invalid(ctx, "GEO_IN_RANGE");
    };
    let Some(d) = centroid_distance(&a, &b, false) else {
        return invalid(ctx, "GEO_IN_RANGE");
    };
    let above = d > low || (flag(args, 4, true) && d == low);
    let below = d < high || (flag(args, 5, true) && d == high);
    Ok(Value::Bool(above && below))
}

/// `IS_IN_POLYGON(polygon, latitude, longitude)` or `IS_IN_POLYGON(polygon, coord,
/// useLonLat)`: the polygon's points are `[latitude, longitude]` unless `useLonLat`.
pub fn is_in_polygon(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let (point, lon_lat) = match (arg(args, 1), arg(args, 2)) {
        (Value::Number(lat), Value::Number(lon)) => (
            json!([lon.as_f64().unwrap_or(0.0), lat.as_f64().unwrap_or(0.0)]),
            false,
        ),
        (Value::Array(coord), flag_value) if coord.len() == 2 => {
            let lon_lat = crate::value::truthy(flag_value);
            let point = if lon_lat {
                json!(coord)
            } else {
                json!([coord[1], coord[0]])
            };
            (point, lon_lat)
        }
        _ => return invalid(ctx, "IS_IN_POLYGON"),
    };
    let Some(Value::Array(corners)) = args.first() else {
        return invalid(ctx, "IS_IN_POLYGON");
    };
    let swapped: Vec<Value> = corners
        .iter()
        .map(|c| match c.as_array() {
            Some(p) if p.len() == 2 && !lon_lat => json!([p[1], p[0]]),
            _ => c.clone(),
        })
        .collect();
    let mut ring = swapped;
    if ring.first() != ring.last() {
        if let Some(first) = ring.first().cloned() {
            ring.push(first);
        }
    }
    let (Some(shape), Some(point)) = (polygon(&json!([ring])), position(&point)) else {
        return invalid(ctx, "IS_IN_POLYGON");
    };
    Ok(Value::Bool(shape.contains(&Point(point))))
}
