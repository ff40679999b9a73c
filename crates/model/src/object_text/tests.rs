//! The fast route's check against the slow route's parser: whatever `ObjectText::scan` accepts,
//! `json::parse` accepts too and reads as the same object, and the stored forms are equal byte
//! for byte.

use proptest::prelude::*;
use serde_json::{json, Map, Value};

use super::*;
use crate::document::{edge_ends, encode_document, encode_object_text};
use crate::json::parse;
use crate::rev::RevisionId;

/// A tiny deterministic generator for the spelling choices of [`spell`].
struct Choices(u64);

impl Choices {
    fn next(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// Writes `value` as JSON text the way clients might: random whitespace, random escapes of
/// plain characters, numbers in other spellings.
fn spell(value: &Value, c: &mut Choices, out: &mut String) {
    let ws = |c: &mut Choices, out: &mut String| {
        for _ in 0..c.next(3) {
            out.push([' ', '\n', '\t', '\r'][c.next(4) as usize]);
        }
    };
    ws(c, out);
    match value {
        Value::Null | Value::Bool(_) => out.push_str(&value.to_string()),
        Value::Number(n) => match (n.as_i64(), c.next(4)) {
            (Some(i), 0) => out.push_str(&format!("{i}.0")),
            (Some(i), 1) => out.push_str(&format!("{i}e0")),
            (Some(0), 2) => out.push_str("-0"),
            _ => out.push_str(&n.to_string()),
        },
        Value::String(s) => spell_str(s, c, out),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                spell(item, c, out);
            }
            ws(c, out);
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (k, v)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                ws(c, out);
                spell_str(k, c, out);
                ws(c, out);
                out.push(':');
                spell(v, c, out);
            }
            ws(c, out);
            out.push('}');
        }
    }
    ws(c, out);
}

fn spell_str(s: &str, c: &mut Choices, out: &mut String) {
    out.push('"');
    for ch in s.chars() {
        match (ch, c.next(5)) {
            ('"', _) => out.push_str("\\\""),
            ('\\', _) => out.push_str("\\\\"),
            ('/', 0) => out.push_str("\\/"),
            (ch, _) if (ch as u32) < 0x20 => out.push_str(&format!("\\u{:04X}", ch as u32)),
            (ch, 0) => {
                let mut units = [0u16; 2];
                for unit in ch.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{unit:04x}"));
                }
            }
            (ch, _) => out.push(ch),
        }
    }
    out.push('"');
}

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        (-1000i64..1000).prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite and read back", |f| f.is_finite()
                && serde_json::from_str::<f64>(&serde_json::to_string(f).unwrap())
                    .unwrap()
                    == *f)
            .prop_map(Value::from),
        "\\PC{0,12}".prop_map(Value::from),
        "[a-z\"\\\\/\u{0}-\u{1f}é😀]{0,6}".prop_map(Value::from),
    ]
}

fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("_key".to_owned()),
        Just("_id".to_owned()),
        Just("_rev".to_owned()),
        Just("_from".to_owned()),
        Just("_to".to_owned()),
        "[a-z_]{1,3}",
        "\\PC{0,6}",
    ]
}

fn value() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            proptest::collection::vec((name(), inner), 0..6)
                .prop_map(|members| Value::Object(members.into_iter().collect())),
        ]
    })
}

fn document() -> impl Strategy<Value = Map<String, Value>> {
    let system = prop_oneof![
        Just(Value::from("k1")),
        Just(Value::from("c/k2")),
        Just(Value::from("bad key")),
        Just(Value::from(5)),
        "[a-z]{1,4}/[a-z0-9]{1,4}".prop_map(Value::from),
    ];
    proptest::collection::vec((name(), prop_oneof![3 => value(), 2 => system]), 0..12)
        .prop_map(|members| members.into_iter().collect())
}

/// The checks every scanned body must pass against the slow route.
fn agrees_with_slow_route(body: &[u8], depth_max: usize) -> Option<ObjectText> {
    let scanned = ObjectText::scan(body, depth_max)?;
    let parsed = parse(body, depth_max).expect("the scan accepted what the parser refuses");
    let Value::Object(object) = parsed else {
        panic!("the scan accepted a non-object");
    };
    assert_eq!(scanned.text(), serde_json::to_vec(&object).unwrap());
    assert_eq!(scanned.to_object(), object);
    for which in SystemAttribute::ALL {
        let name = std::str::from_utf8(which.quoted())
            .unwrap()
            .trim_matches('"');
        assert_eq!(scanned.attribute(which).as_ref(), object.get(name));
    }
    let rev = RevisionId(0x1234_5678);
    assert_eq!(
        encode_object_text("k", rev, None, &scanned),
        encode_document("k", rev, None, &object)
    );
    if let Ok(ends) = edge_ends(&object) {
        assert_eq!(
            encode_object_text("k", rev, Some(ends), &scanned),
            encode_document("k", rev, Some(ends), &object)
        );
    }
    Some(scanned)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn scanned_bodies_store_what_parsed_bodies_store(doc in document(), seed in 1u64..) {
        let mut text = String::new();
        spell(&Value::Object(doc.clone()), &mut Choices(seed), &mut text);
        agrees_with_slow_route(text.as_bytes(), 64);
        // The fast route takes every well-formed object in compact form as is (the generator
        // makes no duplicates, no big objects and only floats whose text reads back).
        let compact = serde_json::to_vec(&doc).unwrap();
        let scanned = agrees_with_slow_route(&compact, 64);
        prop_assert_eq!(scanned.map(|t| t.text().to_vec()), Some(compact.clone()));
    }

    #[test]
    fn damaged_bodies_are_never_taken_when_the_parser_refuses_them(
        doc in document(),
        seed in 1u64..,
        edits in proptest::collection::vec((any::<usize>(), any::<u8>(), 0u8..3), 1..4),
    ) {
        let mut text = String::new();
        spell(&Value::Object(doc), &mut Choices(seed), &mut text);
        let mut bytes = text.into_bytes();
        for (at, byte, how) in edits {
            let at = at % (bytes.len() + 1);
            match how {
                0 => bytes.insert(at, byte),
                1 if at < bytes.len() => bytes[at] = byte,
                _ if at < bytes.len() => { bytes.remove(at); }
                _ => {}
            }
        }
        for depth in [1, 2, 3, 64] {
            agrees_with_slow_route(&bytes, depth);
        }
    }
}

/// The checks of [`agrees_with_slow_route`] for an array body.
fn array_agrees_with_slow_route(body: &[u8], depth_max: usize) -> Option<Vec<ObjectText>> {
    let scanned = ObjectText::scan_array(body, depth_max)?;
    let parsed = parse(body, depth_max).expect("the scan accepted what the parser refuses");
    let Value::Array(items) = parsed else {
        panic!("the scan accepted a non-array");
    };
    assert_eq!(scanned.len(), items.len());
    for (text, item) in scanned.iter().zip(&items) {
        let object = item
            .as_object()
            .expect("the scan accepted a non-object item");
        assert_eq!(text.text(), serde_json::to_vec(object).unwrap());
        assert_eq!(&text.to_object(), object);
        assert_eq!(
            text.attribute(SystemAttribute::Key).as_ref(),
            object.get("_key")
        );
    }
    Some(scanned)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    #[test]
    fn scanned_arrays_hold_what_parsed_arrays_hold(
        docs in proptest::collection::vec(document(), 1..5),
        seed in 1u64..,
        edit in proptest::option::of((any::<usize>(), any::<u8>())),
    ) {
        let docs: Vec<Value> = docs.into_iter().map(Value::Object).collect();
        let compact = serde_json::to_vec(&docs).unwrap();
        prop_assert!(array_agrees_with_slow_route(&compact, 64).is_some());
        let mut text = String::new();
        spell(&Value::Array(docs), &mut Choices(seed), &mut text);
        let mut bytes = text.into_bytes();
        if let Some((at, byte)) = edit {
            let at = at % bytes.len();
            bytes[at] = byte;
        }
        for depth in [1, 2, 3, 64] {
            array_agrees_with_slow_route(&bytes, depth);
        }
    }
}

#[test]
fn arrays_of_anything_but_objects_take_the_slow_route() {
    for body in [
        &b"[]"[..],
        b"[{},1]",
        b"[{}",
        b"[{}] x",
        b"{}",
        b"[{},]",
        b"[[{}]]",
    ] {
        assert!(ObjectText::scan_array(body, 64).is_none(), "{:?}", body);
    }
    assert!(array_agrees_with_slow_route(b" [ {} , {\"a\":[1]} ] ", 3).is_some());
    assert!(ObjectText::scan_array(b"[{\"a\":[1]}]", 2).is_none());
}

#[test]
fn duplicates_bad_json_and_deep_nesting_take_the_slow_route() {
    for body in [
        &br#"{"a":1,"a":2}"#[..],
        br#"{"a":1,"\u0061":2}"#,
        br#"{"x":{"y":1,"y":1}}"#,
        br#"{"x":[{"k":1,"k":1}]}"#,
        br#"{"_key":"a","_key":"b"}"#,
        b"[1]",
        b"\"x\"",
        b"{",
        b"{\"a\":}",
        b"{} x",
        b"",
        b"{\"a\":1,}",
        b"{\"a\":01}",
        b"{\"a\":1.}",
        b"{\"a\":1e400}",
        b"{\"a\":\"\xff\"}",
        b"{\"a\":\"\x01\"}",
        br#"{"a":"\ud800"}"#,
        br#"{"a":"\x"}"#,
        b"\xef\xbb\xbf{}",
    ] {
        assert!(
            ObjectText::scan(body, 64).is_none(),
            "{:?}",
            String::from_utf8_lossy(body)
        );
    }
    assert!(ObjectText::scan(b"{\"a\":[[1]]}", 3).is_some());
    assert!(ObjectText::scan(b"{\"a\":[[1]]}", 2).is_none());
    assert!(ObjectText::scan(b"{}", 0).is_none());
    let wide: Map<String, Value> = (0..=OBJECT_MEMBERS_MAX)
        .map(|i| (format!("a{i}"), Value::from(i)))
        .collect();
    let wide = serde_json::to_vec(&wide).unwrap();
    assert!(ObjectText::scan(&wide, 64).is_none());
    assert!(parse(&wide, 64).is_ok());
}

#[test]
fn whitespace_escapes_and_number_spellings_are_taken_and_compacted() {
    let body = b" {\n\t\"a\\/b\" : \"\\u00e9\\n\\u001F\\/\" ,\r \"n\": [ 1.50, -0, 1E2, 12345678901234567890 ] } \n";
    let text = agrees_with_slow_route(body, 64).unwrap();
    assert_eq!(
        std::str::from_utf8(text.text()).unwrap(),
        "{\"a/b\":\"\u{e9}\\n\\u001f/\",\"n\":[1.5,-0.0,100.0,12345678901234567890]}"
    );
}

#[test]
fn system_attributes_are_spliced_out_in_place() {
    let body = br#" { "a" : 1 , "_rev" : "x", "_key":"k9", "b":[ 1, "s" ], "_id":"c/k" , "_from":"a/1","_to":"b/2" } "#;
    let text = agrees_with_slow_route(body, 64).unwrap();
    assert_eq!(text.attribute(SystemAttribute::Key), Some(json!("k9")));
    let stored = encode_object_text("k9", RevisionId(1), None, &text);
    assert_eq!(
        std::str::from_utf8(&stored).unwrap(),
        r#"{"_key":"k9","_rev":"_","a":1,"b":[1,"s"],"_from":"a/1","_to":"b/2"}"#
    );
    let ends = crate::document::EdgeEnds {
        from: "a/1",
        to: "b/2",
    };
    let stored = encode_object_text("k9", RevisionId(1), Some(ends), &text);
    assert_eq!(
        std::str::from_utf8(&stored).unwrap(),
        r#"{"_key":"k9","_rev":"_","_from":"a/1","_to":"b/2","a":1,"b":[1,"s"]}"#
    );
    let only_system = agrees_with_slow_route(br#"{"_key":"k","_rev":"r"}"#, 64).unwrap();
    assert_eq!(
        encode_object_text("k", RevisionId(1), None, &only_system),
        br#"{"_key":"k","_rev":"_"}"#
    );
}

/// A body of many tiny documents (`[{},{},…]`, 3 bytes each) is held as texts until every one
/// is written, one `ObjectText` each: a text must take no more room than the parsed object it
/// stands in for, or the fast route needs several times the parsing route's memory for such a
/// body (before: 192 bytes a text against 72 for a `Value`; a 16 MiB body of `{}` peaked at
/// 1.2 GiB against 0.4 GiB, and took 3 times as long).
#[test]
fn a_text_takes_no_more_room_than_the_value_it_stands_for() {
    let text = std::mem::size_of::<ObjectText>();
    let value = std::mem::size_of::<Value>();
    assert!(text <= value, "ObjectText {text} bytes, Value {value}");
}

/// Nesting at the deepest bound the server allows is scanned (and one level more refused)
/// within a quarter of a server thread's 4 MiB stack, in an unoptimised build too; objects and
/// arrays alternate, as both recurse.
#[test]
fn nesting_at_the_deepest_bound_fits_a_small_stack() {
    use crate::json::JSON_DEPTH_LIMIT;
    let nested = |depth: usize| {
        let mut body = Vec::new();
        for level in 1..depth {
            body.extend_from_slice(if level % 2 == 1 { b"{\"a\":" } else { b"[" });
        }
        body.extend_from_slice(b"{}");
        for level in (1..depth).rev() {
            body.push(if level % 2 == 1 { b'}' } else { b']' });
        }
        body
    };
    let scan = move || {
        let at_bound = nested(JSON_DEPTH_LIMIT);
        let text = ObjectText::scan(&at_bound, JSON_DEPTH_LIMIT).expect("at the bound");
        assert_eq!(text.text(), &at_bound[..]);
        assert!(ObjectText::scan(&nested(JSON_DEPTH_LIMIT + 1), JSON_DEPTH_LIMIT).is_none());
        let mut array = b"[".to_vec();
        array.extend_from_slice(&nested(JSON_DEPTH_LIMIT - 1));
        array.push(b']');
        assert!(ObjectText::scan_array(&array, JSON_DEPTH_LIMIT).is_some());
        let mut array = b"[".to_vec();
        array.extend_from_slice(&nested(JSON_DEPTH_LIMIT));
        array.push(b']');
        assert!(ObjectText::scan_array(&array, JSON_DEPTH_LIMIT).is_none());
    };
    std::thread::Builder::new()
        .stack_size(1 << 20)
        .spawn(scan)
        .unwrap()
        .join()
        .unwrap();
}

/// Numbers that are not small integers are each read and written again by serde_json on the
/// fast route, several times what the slow route spends on one: a body dense in them takes the
/// slow route (an array of 0.1s took 1.7 times, one of 20-digit integers 4.7 times as long),
/// one with a few of them among other text does not.
#[test]
fn bodies_dense_in_rewritten_numbers_take_the_slow_route() {
    let dense =
        |number: &str, count: usize| format!("{{\"a\":[{}]}}", vec![number; count].join(","));
    for number in ["0.1", "1e5", "12345678901234567890", "-0"] {
        let few = dense(number, REWRITTEN_NUMBERS_FREE);
        assert!(
            agrees_with_slow_route(few.as_bytes(), 64).is_some(),
            "{few}"
        );
        let many = dense(number, 1000);
        assert!(ObjectText::scan(many.as_bytes(), 64).is_none(), "{number}");
        assert!(parse(many.as_bytes(), 64).is_ok());
        let array = format!("[{many}]");
        assert!(
            ObjectText::scan_array(array.as_bytes(), 64).is_none(),
            "{number}"
        );
    }
    let text = "x".repeat(BYTES_PER_REWRITTEN_NUMBER);
    let spread: Vec<String> = (0..1000)
        .map(|i| format!("\"{text}{i}\":[{i}.5]"))
        .collect();
    let spread = format!(
        "{{\"o\":[{}]}}",
        spread
            .iter()
            .map(|m| format!("{{{m}}}"))
            .collect::<Vec<_>>()
            .join(",")
    );
    assert!(agrees_with_slow_route(spread.as_bytes(), 64).is_some());
}
