//! Geo indexes as every engine sees them: the options ([`GeoOptions`]), the location a
//! document gives the index, the grid its entries are sorted by, the regions a lookup reads
//! ([`cap_ranges`], [`Rectangle::ranges`]) and the exact tests that decide a hit.
//!
//! What it is: a fixed grid over latitude and longitude. A location is quantised to
//! [`AXIS_BITS`] bits per axis (about 0.6 m of latitude) and the two are interleaved into a
//! Z-order cell number below 2^52, so every cell of a coarser level is one contiguous range
//! of cell numbers. A document's one entry is `[cell, latitude, longitude]`, kept in the same
//! ordered map as a persistent index's entries (numbers below 2^53 compare exactly). A lookup
//! covers its region (a spherical cap around a point, or a rectangle) with at most
//! [`COVER_CELLS_MAX`] cells of the finest level that allows it, reads those ranges, and
//! decides each candidate exactly ([`distance_m`], [`Rectangle::contains`]).
//!
//! What it is not: S2. `bestIndexedLevel`, `worstIndexedLevel` and `maxNumCoverCells` are
//! accepted and reported as ArangoDB reports them, but the grid does not change with them.
//! Nor does it index shapes by their cover: a GeoJSON line or polygon is indexed by its
//! centroid (planar, on longitude and latitude: the point `GEO_DISTANCE` measures from), so
//! `NEAR`, `WITHIN` and `WITHIN_RECTANGLE` treat it as that point.
//!
//! Invariants: a location is valid only with a finite latitude in [-90, 90] and longitude in
//! [-180, 180]; a document without one gives no entry (geo indexes are always sparse);
//! distances are haversine metres on a sphere of radius [`EARTH_RADIUS_M`] (as `DISTANCE()`),
//! computed by this one function in every engine, so engines order hits identically; a
//! region's cover contains every cell a point of the region can fall in.

use ::geo::{Centroid, Coord, Geometry, LineString, MultiLineString, MultiPoint, MultiPolygon};
use ::geo::{Point, Polygon};
use quince_errors::Result;
use serde_json::{Map, Value};

use super::definition::bad;

/// ArangoDB's earth radius in metres.
pub const EARTH_RADIUS_M: f64 = 6_371_000.0;

/// Half the earth's circumference: no two points are farther apart.
pub const HALF_CIRCUMFERENCE_M: f64 = std::f64::consts::PI * EARTH_RADIUS_M;

/// Bits per axis of the finest grid level (2 x 26 = 52 bits: exact as a JSON number).
pub const AXIS_BITS: u32 = 26;

/// The most cells a region's cover uses (the level is the finest that stays within it).
pub const COVER_CELLS_MAX: u64 = 32;

/// Slack added around a region before it is covered, in degrees, so that rounding never
/// leaves out a cell a boundary point falls in (the exact test decides afterwards).
const COVER_SLACK_DEG: f64 = 1e-9;

/// A geo index's options, as ArangoDB reports them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GeoOptions {
    /// `geoJson`: a one-attribute location is `[longitude, latitude]` (else
    /// `[latitude, longitude]`); GeoJSON objects are read either way.
    pub geo_json: bool,
    /// `legacyPolygons` (reported; a polygon is indexed by its centroid either way).
    pub legacy_polygons: bool,
    /// `bestIndexedLevel` (reported only).
    pub best_indexed_level: u32,
    /// `worstIndexedLevel` (reported only).
    pub worst_indexed_level: u32,
    /// `maxNumCoverCells` (reported only).
    pub max_num_cover_cells: u32,
}

impl GeoOptions {
    /// The options of a create body, with ArangoDB's defaults (levels 17 and 4, 8 cells).
    pub(crate) fn parse(body: &Map<String, Value>) -> Result<GeoOptions> {
        let level = |name: &str, default: u32, max: u32| -> Result<u32> {
            match body.get(name) {
                None | Some(Value::Null) => Ok(default),
                Some(value) => value
                    .as_u64()
                    .filter(|n| *n <= u64::from(max))
                    .map(|n| n as u32)
                    .ok_or_else(|| bad(format!("'{name}' must be an integer from 0 to {max}"))),
            }
        };
        let flag = |name: &str| body.get(name).and_then(Value::as_bool).unwrap_or(false);
        Ok(GeoOptions {
            geo_json: flag("geoJson"),
            legacy_polygons: flag("legacyPolygons"),
            best_indexed_level: level("bestIndexedLevel", 17, 30)?,
            worst_indexed_level: level("worstIndexedLevel", 4, 30)?,
            max_num_cover_cells: level("maxNumCoverCells", 8, 1 << 16)?,
        })
    }

    /// Adds the options' attributes to a description or stored definition.
    pub(crate) fn describe(&self, object: &mut Map<String, Value>) {
        object.insert("bestIndexedLevel".into(), self.best_indexed_level.into());
        object.insert("geoJson".into(), self.geo_json.into());
        object.insert("legacyPolygons".into(), self.legacy_polygons.into());
        object.insert("maxNumCoverCells".into(), self.max_num_cover_cells.into());
        object.insert("worstIndexedLevel".into(), self.worst_indexed_level.into());
    }
}

/// The great-circle distance in metres between two (latitude, longitude) points (haversine).
pub fn distance_m(lat1: f64, lon1: f64, lat2: f64, lon2: f64) -> f64 {
    let (p1, p2) = (lat1.to_radians(), lat2.to_radians());
    let d_lat = p2 - p1;
    let d_lon = (lon2 - lon1).to_radians();
    let h = (d_lat / 2.0).sin().powi(2) + p1.cos() * p2.cos() * (d_lon / 2.0).sin().powi(2);
    2.0 * EARTH_RADIUS_M * h.sqrt().min(1.0).asin()
}

fn valid(lat: f64, lon: f64) -> bool {
    (-90.0..=90.0).contains(&lat) && (-180.0..=180.0).contains(&lon)
}

/// The (latitude, longitude) the indexed values give: with two fields, two numbers; with
/// one, a pair (`[lat, lon]`, or `[lon, lat]` with `geo_json`) or a GeoJSON geometry (its
/// centroid). `None` when they give no valid location.
pub(crate) fn location(values: &[&Value], geo_json: bool) -> Option<(f64, f64)> {
    let (lat, lon) = match values {
        [lat, lon] => (lat.as_f64()?, lon.as_f64()?),
        [Value::Array(pair)] => {
            let (a, b) = (pair.first()?.as_f64()?, pair.get(1)?.as_f64()?);
            if geo_json {
                (b, a)
            } else {
                (a, b)
            }
        }
        [object @ Value::Object(_)] => {
            let centroid = geometry(object)?.centroid()?;
            (centroid.y(), centroid.x())
        }
        _ => return None,
    };
    valid(lat, lon).then_some((lat, lon))
}

/// A GeoJSON position `[longitude, latitude]` in range (more numbers after the two are
/// ignored).
pub fn position(value: &Value) -> Option<Coord<f64>> {
    let items = value.as_array()?;
    let (x, y) = (items.first()?.as_f64()?, items.get(1)?.as_f64()?);
    valid(y, x).then_some(Coord { x, y })
}

/// An array of GeoJSON positions.
pub fn positions(value: &Value) -> Option<Vec<Coord<f64>>> {
    value.as_array()?.iter().map(position).collect()
}

/// A GeoJSON linear ring: four positions or more, the last equal to the first.
pub fn ring(value: &Value) -> Option<LineString<f64>> {
    let coords = positions(value)?;
    (coords.len() >= 4 && coords.first() == coords.last()).then(|| LineString::new(coords))
}

/// A GeoJSON polygon's coordinates: an outer ring, then the holes.
pub fn polygon(value: &Value) -> Option<Polygon<f64>> {
    let rings = value.as_array()?;
    let (outer, holes) = rings.split_first()?;
    Some(Polygon::new(
        ring(outer)?,
        holes.iter().map(ring).collect::<Option<_>>()?,
    ))
}

/// A GeoJSON geometry object (`Point` to `MultiPolygon`).
pub fn geometry(value: &Value) -> Option<Geometry<f64>> {
    let coordinates = value.get("coordinates")?;
    Some(match value.get("type")?.as_str()? {
        "Point" => Geometry::Point(Point(position(coordinates)?)),
        "MultiPoint" => Geometry::MultiPoint(MultiPoint::new(
            positions(coordinates)?.into_iter().map(Point).collect(),
        )),
        "LineString" => Geometry::LineString(LineString::new(positions(coordinates)?)),
        "MultiLineString" => Geometry::MultiLineString(MultiLineString::new(
            coordinates
                .as_array()?
                .iter()
                .map(|l| positions(l).map(LineString::new))
                .collect::<Option<_>>()?,
        )),
        "Polygon" => Geometry::Polygon(polygon(coordinates)?),
        "MultiPolygon" => Geometry::MultiPolygon(MultiPolygon::new(
            coordinates
                .as_array()?
                .iter()
                .map(polygon)
                .collect::<Option<_>>()?,
        )),
        _ => return None,
    })
}

/// The grid coordinate of a latitude or longitude (`span` 180 or 360) at the finest level.
fn quantize(degrees: f64, span: f64) -> u32 {
    let cells = f64::from(1u32 << AXIS_BITS);
    let q = ((degrees + span / 2.0) / span * cells).floor();
    q.clamp(0.0, cells - 1.0) as u32
}

/// Spreads the low 26 bits of `v` to the even bit positions.
fn spread(v: u32) -> u64 {
    let mut x = u64::from(v) & ((1 << AXIS_BITS) - 1);
    x = (x | (x << 16)) & 0x0000_FFFF_0000_FFFF;
    x = (x | (x << 8)) & 0x00FF_00FF_00FF_00FF;
    x = (x | (x << 4)) & 0x0F0F_0F0F_0F0F_0F0F;
    x = (x | (x << 2)) & 0x3333_3333_3333_3333;
    x = (x | (x << 1)) & 0x5555_5555_5555_5555;
    x
}

/// The Z-order number of grid coordinates (longitude bits even, latitude bits odd).
fn interleave(x: u32, y: u32) -> u64 {
    spread(x) | (spread(y) << 1)
}

/// The finest-level cell of a location.
pub fn cell(lat: f64, lon: f64) -> u64 {
    interleave(quantize(lon, 360.0), quantize(lat, 180.0))
}

/// The entry of a location: `[cell, latitude, longitude]`.
pub(crate) fn entry(lat: f64, lon: f64) -> Option<Box<[Value]>> {
    let number = |v: f64| serde_json::Number::from_f64(v).map(Value::Number);
    Some(vec![Value::from(cell(lat, lon)), number(lat)?, number(lon)?].into_boxed_slice())
}

/// The (latitude, longitude) of an entry made by [`entry`].
pub fn entry_location(values: &[Value]) -> Option<(f64, f64)> {
    Some((values.get(1)?.as_f64()?, values.get(2)?.as_f64()?))
}

/// A latitude/longitude box without wrap-around (`lon_low <= lon_high`).
#[derive(Clone, Copy, Debug)]
struct LatLonBox {
    lat_low: f64,
    lat_high: f64,
    lon_low: f64,
    lon_high: f64,
}

impl LatLonBox {
    const WORLD: LatLonBox = LatLonBox {
        lat_low: -90.0,
        lat_high: 90.0,
        lon_low: -180.0,
        lon_high: 180.0,
    };

    /// The grid coordinate ranges (inclusive) of the box at the finest level, with slack.
    fn grid(&self) -> ((u32, u32), (u32, u32)) {
        let s = COVER_SLACK_DEG;
        (
            (
                quantize(self.lon_low - s, 360.0),
                quantize(self.lon_high + s, 360.0),
            ),
            (
                quantize(self.lat_low - s, 180.0),
                quantize(self.lat_high + s, 180.0),
            ),
        )
    }
}

/// The cell number ranges (`low..high`, sorted, disjoint) that cover `boxes`: each box with
/// the finest level whose cells over it number at most [`COVER_CELLS_MAX`].
fn cover(boxes: &[LatLonBox]) -> Vec<(u64, u64)> {
    let mut ranges = Vec::new();
    for b in boxes {
        let ((x0, x1), (y0, y1)) = b.grid();
        let level = (0..=AXIS_BITS)
            .rev()
            .find(|level| {
                let shift = AXIS_BITS - level;
                let nx = u64::from((x1 >> shift) - (x0 >> shift)) + 1;
                let ny = u64::from((y1 >> shift) - (y0 >> shift)) + 1;
                nx * ny <= COVER_CELLS_MAX
            })
            .unwrap_or(0);
        let shift = AXIS_BITS - level;
        for cx in (x0 >> shift)..=(x1 >> shift) {
            for cy in (y0 >> shift)..=(y1 >> shift) {
                let prefix = interleave(cx, cy);
                ranges.push((prefix << (2 * shift), (prefix + 1) << (2 * shift)));
            }
        }
    }
    ranges.sort_unstable();
    let mut merged: Vec<(u64, u64)> = Vec::with_capacity(ranges.len());
    for (low, high) in ranges {
        match merged.last_mut() {
            Some(last) if low <= last.1 => last.1 = last.1.max(high),
            _ => merged.push((low, high)),
        }
    }
    merged
}

/// Splits a longitude interval that may pass ±180 into boxes without wrap-around. -180 and
/// 180 are one meridian but two ends of the grid: a box that reaches one also takes the other.
fn boxes(lat_low: f64, lat_high: f64, lon_low: f64, lon_high: f64) -> Vec<LatLonBox> {
    let make = |lon_low: f64, lon_high: f64| LatLonBox {
        lat_low,
        lat_high,
        lon_low,
        lon_high,
    };
    let mut out = if lon_high - lon_low >= 360.0 {
        vec![make(-180.0, 180.0)]
    } else if lon_low < -180.0 {
        vec![make(lon_low + 360.0, 180.0), make(-180.0, lon_high)]
    } else if lon_high > 180.0 {
        vec![make(lon_low, 180.0), make(-180.0, lon_high - 360.0)]
    } else {
        vec![make(lon_low, lon_high)]
    };
    if out.iter().any(|b| b.lon_low <= -180.0) {
        out.push(make(180.0, 180.0));
    }
    if out.iter().any(|b| b.lon_high >= 180.0) {
        out.push(make(-180.0, -180.0));
    }
    out
}

/// The cell ranges that cover every point within `radius_m` of (`lat`, `lon`).
pub fn cap_ranges(lat: f64, lon: f64, radius_m: f64) -> Vec<(u64, u64)> {
    let delta = radius_m / EARTH_RADIUS_M;
    if delta.is_nan() || delta >= std::f64::consts::PI {
        return cover(&[LatLonBox::WORLD]);
    }
    let d_lat = delta.to_degrees();
    let (lat_low, lat_high) = (lat - d_lat, lat + d_lat);
    if lat_low <= -90.0 || lat_high >= 90.0 {
        // The cap holds a pole: every longitude.
        return cover(&boxes(
            lat_low.max(-90.0),
            lat_high.min(90.0),
            -180.0,
            180.0,
        ));
    }
    let s = delta.sin() / lat.to_radians().cos();
    if s >= 1.0 {
        return cover(&boxes(lat_low, lat_high, -180.0, 180.0));
    }
    let d_lon = s.asin().to_degrees();
    cover(&boxes(lat_low, lat_high, lon - d_lon, lon + d_lon))
}

/// A rectangle of `WITHIN_RECTANGLE`: the latitudes between the corners' and the shorter
/// arc of longitudes between them (the one across ±180 when that is shorter).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rectangle {
    lat_low: f64,
    lat_high: f64,
    /// The western edge: the arc runs east from here to `lon_east`, maybe across ±180.
    lon_west: f64,
    lon_east: f64,
}

impl Rectangle {
    /// The rectangle between two corners (latitude, longitude); `None` for an invalid one.
    pub fn from_corners(lat1: f64, lon1: f64, lat2: f64, lon2: f64) -> Option<Rectangle> {
        if !valid(lat1, lon1) || !valid(lat2, lon2) {
            return None;
        }
        let (a, b) = (lon1.min(lon2), lon1.max(lon2));
        let (lon_west, lon_east) = if b - a <= 180.0 { (a, b) } else { (b, a) };
        Some(Rectangle {
            lat_low: lat1.min(lat2),
            lat_high: lat1.max(lat2),
            lon_west,
            lon_east,
        })
    }

    /// True when the rectangle holds the point (edges included).
    pub fn contains(&self, lat: f64, lon: f64) -> bool {
        let lon_in = if self.lon_west <= self.lon_east {
            (self.lon_west..=self.lon_east).contains(&lon)
        } else {
            lon >= self.lon_west || lon <= self.lon_east
        };
        lon_in && (self.lat_low..=self.lat_high).contains(&lat)
    }

    /// The cell ranges that cover the rectangle.
    pub fn ranges(&self) -> Vec<(u64, u64)> {
        let east = if self.lon_west <= self.lon_east {
            self.lon_east
        } else {
            self.lon_east + 360.0
        };
        cover(&boxes(self.lat_low, self.lat_high, self.lon_west, east))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn cells_are_z_order_and_levels_are_ranges() {
        assert_eq!(cell(-90.0, -180.0), 0);
        assert_eq!(cell(90.0, 180.0), (1 << 52) - 1);
        let c = cell(52.5, 13.4);
        let ranges = cap_ranges(52.5, 13.4, 1000.0);
        assert!(ranges.iter().any(|(l, h)| (*l..*h).contains(&c)));
        assert!(ranges.len() as u64 <= COVER_CELLS_MAX);
    }

    #[test]
    fn locations_follow_the_options() {
        let (a, b) = (json!(10.0), json!(20.0));
        assert_eq!(location(&[&a, &b], false), Some((10.0, 20.0)));
        let pair = json!([10.0, 20.0]);
        assert_eq!(location(&[&pair], false), Some((10.0, 20.0)));
        assert_eq!(location(&[&pair], true), Some((20.0, 10.0)));
        let point = json!({"type": "Point", "coordinates": [20.0, 10.0]});
        assert_eq!(location(&[&point], true), Some((10.0, 20.0)));
        let square = json!({"type": "Polygon",
            "coordinates": [[[0.0, 0.0], [2.0, 0.0], [2.0, 2.0], [0.0, 2.0], [0.0, 0.0]]]});
        assert_eq!(location(&[&square], true), Some((1.0, 1.0)));
        assert_eq!(location(&[&json!([91.0, 0.0])], false), None);
        assert_eq!(location(&[&json!("x")], false), None);
        assert_eq!(location(&[&json!(1), &json!(null)], false), None);
    }

    #[test]
    fn rectangles_take_the_shorter_arc() {
        let r = Rectangle::from_corners(-10.0, 170.0, 10.0, -170.0).unwrap();
        assert!(r.contains(0.0, 180.0) && r.contains(0.0, -175.0) && !r.contains(0.0, 0.0));
        let c = cell(0.0, 179.0);
        assert!(r.ranges().iter().any(|(l, h)| (*l..*h).contains(&c)));
    }
}
