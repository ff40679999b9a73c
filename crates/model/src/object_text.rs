//! A JSON object body checked and compacted in one pass, without building a tree: the fast
//! route of an insert from the request's bytes to the stored form.
//!
//! What it is: [`ObjectText::scan`] reads a body that must be one JSON object and, when it is
//! simple enough, hands back its compact text (whitespace outside strings dropped) together
//! with where its top-level system attributes (`_key`, `_id`, `_rev`, `_from`, `_to`) are.
//! The text is exactly what `serde_json` writes for the value [`crate::json::parse`] reads from
//! the body: strings with escapes and numbers that are not small integers are decoded and
//! written again by `serde_json` itself, everything else is copied. The stored form is then
//! spliced from it (`document::encode_object_text`) with no tree at all.
//!
//! What it is not: a second JSON parser with its own rules or errors. A `None` says only
//! "take the slow route": [`crate::json::parse`] then answers exactly as it always did
//! (malformed JSON, duplicate attributes, nesting beyond the bound, bad UTF-8 all end there).
//! Objects with more than [`OBJECT_MEMBERS_MAX`] members also take the slow route, which
//! bounds the duplicate checks here, and so do bodies dense in numbers that are not small
//! integers ([`REWRITTEN_NUMBERS_FREE`]), which cost more here than there.
//!
//! [`ObjectText::scan_array`] does the same for a body that is an array of objects.
//!
//! Invariants: `scan(b, d)` is `Some(t)` only when `json::parse(b, d)` is an object `v`, and
//! then `t.text() == serde_json::to_vec(&v)` (so `t.to_object() == v`); the system attributes
//! are recorded for the top level only; a number whose text reads back as another number takes
//! the slow route. `scan_array(b, d)` is `Some(ts)` only when `json::parse(b, d)` is a
//! non-empty array of objects, `ts` holding what `scan` holds for each of them.

use serde_json::{Map, Value};

/// The most members one object (at any depth) may have on the fast route; bigger ones take
/// the slow route, so the duplicate check here stays quadratic in a small number.
pub const OBJECT_MEMBERS_MAX: usize = 64;

/// How many numbers that are not small integers (fractions, exponents, big integers, `-0`) a
/// body may hold before their density counts: past it, a body with more than one such number
/// per [`BYTES_PER_REWRITTEN_NUMBER`] bytes read so far takes the slow route, where it costs
/// less (each is read and written again by serde_json here; an array of floats took 1.7 times,
/// one of 20-digit integers 4.7 times the slow route's time).
pub const REWRITTEN_NUMBERS_FREE: usize = 16;

/// See [`REWRITTEN_NUMBERS_FREE`].
pub const BYTES_PER_REWRITTEN_NUMBER: usize = 32;

/// A top-level attribute the stored form writes itself or drops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SystemAttribute {
    /// `_key`.
    Key,
    /// `_id`.
    Id,
    /// `_rev`.
    Rev,
    /// `_from`.
    From,
    /// `_to`.
    To,
}

impl SystemAttribute {
    const ALL: [SystemAttribute; 5] = [
        SystemAttribute::Key,
        SystemAttribute::Id,
        SystemAttribute::Rev,
        SystemAttribute::From,
        SystemAttribute::To,
    ];

    /// The attribute's name as compact JSON text (with its quotes).
    fn quoted(self) -> &'static [u8] {
        match self {
            SystemAttribute::Key => b"\"_key\"",
            SystemAttribute::Id => b"\"_id\"",
            SystemAttribute::Rev => b"\"_rev\"",
            SystemAttribute::From => b"\"_from\"",
            SystemAttribute::To => b"\"_to\"",
        }
    }
}

/// One top-level member in the text: `text[start..end]` is `"name":value`, `text[value..end]`
/// the value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Member {
    /// Where the member's name starts.
    pub start: usize,
    /// Where its value starts.
    pub value: usize,
    /// Just after its value.
    pub end: usize,
}

/// A checked JSON object body as compact text (see the module doc).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObjectText {
    text: Vec<u8>,
    /// Where the top-level system attributes are; boxed, and only when there is one, so that
    /// a text takes less room than the `Value` it stands for (an array body of tiny documents
    /// holds one text per document until all are written).
    system: Option<Box<SystemMembers>>,
    depth_max: usize,
}

/// The top-level system attributes of an object, by [`SystemAttribute`].
type SystemMembers = [Option<Member>; 5];

/// `system` boxed when it holds any attribute.
fn boxed(system: SystemMembers) -> Option<Box<SystemMembers>> {
    system.iter().any(Option::is_some).then(|| Box::new(system))
}

impl ObjectText {
    /// The body as compact text, when it is an object the fast route can take (see the module
    /// doc); `depth_max` is [`crate::json::parse`]'s nesting bound.
    pub fn scan(body: &[u8], depth_max: usize) -> Option<ObjectText> {
        let mut scanner = Scanner {
            input: body,
            pos: 0,
            out: Vec::with_capacity(body.len()),
            names: Vec::new(),
            rewritten_numbers: 0,
        };
        scanner.skip_whitespace();
        if scanner.peek()? != b'{' {
            return None;
        }
        let mut system = [None; 5];
        scanner.object(depth_max, Some(&mut system))?;
        scanner.skip_whitespace();
        if scanner.pos != body.len() {
            return None;
        }
        Some(ObjectText {
            text: scanner.out,
            system: boxed(system),
            depth_max,
        })
    }

    /// The objects of a body that must be a non-empty JSON array of objects, when every one
    /// of them can take the fast route (the array counts as one level of `depth_max`).
    pub fn scan_array(body: &[u8], depth_max: usize) -> Option<Vec<ObjectText>> {
        let mut scanner = Scanner {
            input: body,
            pos: 0,
            out: Vec::new(),
            names: Vec::new(),
            rewritten_numbers: 0,
        };
        scanner.skip_whitespace();
        if scanner.next()? != b'[' {
            return None;
        }
        let depth_max = depth_max.checked_sub(1)?;
        let mut documents = Vec::new();
        loop {
            scanner.skip_whitespace();
            if scanner.peek()? != b'{' {
                return None;
            }
            let mut system = [None; 5];
            scanner.object(depth_max, Some(&mut system))?;
            let capacity = scanner.out.len() + 16;
            documents.push(ObjectText {
                text: std::mem::replace(&mut scanner.out, Vec::with_capacity(capacity)),
                system: boxed(system),
                depth_max,
            });
            scanner.skip_whitespace();
            match scanner.next()? {
                b',' => {}
                b']' => break,
                _ => return None,
            }
        }
        scanner.skip_whitespace();
        (scanner.pos == body.len()).then_some(documents)
    }

    /// The compact text of the whole object.
    pub fn text(&self) -> &[u8] {
        &self.text
    }

    /// Where the top-level attribute `name` is, if the object has it.
    pub fn member(&self, name: SystemAttribute) -> Option<Member> {
        self.system.as_ref()?[name as usize]
    }

    /// The value of the top-level attribute `name`, if the object has it.
    pub fn attribute(&self, name: SystemAttribute) -> Option<Value> {
        let member = self.member(name)?;
        let value = &self.text[member.value..member.end];
        Some(crate::json::parse(value, self.depth_max).expect("checked by the scan"))
    }

    /// The object as [`crate::json::parse`] reads the body (the slow route's input).
    pub fn to_object(&self) -> Map<String, Value> {
        match crate::json::parse(&self.text, self.depth_max) {
            Ok(Value::Object(object)) => object,
            _ => unreachable!("the scan checked an object"),
        }
    }

    /// Appends every top-level member except those of `skip` as `,"name":value`, in order.
    pub fn write_members_except(&self, skip: &[SystemAttribute], out: &mut Vec<u8>) {
        let mut cursor = 1; // after `{`
        let last = self.text.len() - 1; // `}`
        let write = |segment: &[u8], out: &mut Vec<u8>| {
            let segment = segment.strip_suffix(b",").unwrap_or(segment);
            if !segment.is_empty() {
                out.push(b',');
                out.extend_from_slice(segment);
            }
        };
        // The members to skip, in text order (at most the five system attributes).
        let mut found = [Member {
            start: 0,
            value: 0,
            end: 0,
        }; 5];
        let mut n = 0;
        for member in skip.iter().filter_map(|name| self.member(*name)) {
            if !found[..n].contains(&member) {
                found[n] = member;
                n += 1;
            }
        }
        let found = &mut found[..n];
        found.sort_unstable_by_key(|m| m.start);
        for member in found.iter() {
            write(&self.text[cursor..member.start], out);
            cursor = member.end;
            if self.text[cursor] == b',' {
                cursor += 1;
            }
        }
        if cursor < last {
            write(&self.text[cursor..last], out);
        }
    }
}

/// The bytes that end a run of plain string content: the closing quote, a backslash and the
/// control characters JSON forbids in strings.
const STRING_STOPS: [bool; 256] = {
    let mut stops = [false; 256];
    let mut b = 0;
    while b < 0x20 {
        stops[b] = true;
        b += 1;
    }
    stops[b'"' as usize] = true;
    stops[b'\\' as usize] = true;
    stops
};

/// Writes the string serde_json decoded as serde_json writes it, with no owned copy between.
struct WriteString<'o>(&'o mut Vec<u8>);

impl serde::de::Visitor<'_> for WriteString<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a string")
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<(), E> {
        serde_json::to_writer(self.0, v).map_err(E::custom)
    }
}

/// The one pass over a body: checks it, writes its compact text to `out`.
struct Scanner<'a> {
    input: &'a [u8],
    pos: usize,
    out: Vec<u8>,
    /// The member names (ranges of `out`) of the objects being read, innermost last.
    names: Vec<(usize, usize)>,
    /// How many numbers were read and written again by serde_json (see [`Scanner::number`]).
    rewritten_numbers: usize,
}

impl Scanner<'_> {
    fn peek(&self) -> Option<u8> {
        self.input.get(self.pos).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let byte = self.peek()?;
        self.pos += 1;
        Some(byte)
    }

    fn skip_whitespace(&mut self) {
        while let Some(b' ' | b'\n' | b'\t' | b'\r') = self.peek() {
            self.pos += 1;
        }
    }

    fn value(&mut self, depth_left: usize) -> Option<()> {
        match self.peek()? {
            b'{' => self.object(depth_left, None),
            b'[' => self.array(depth_left),
            b'"' => self.string(),
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            b'n' => self.literal(b"null"),
            b'-' | b'0'..=b'9' => self.number(),
            _ => None,
        }
    }

    fn literal(&mut self, word: &[u8]) -> Option<()> {
        if !self.input[self.pos..].starts_with(word) {
            return None;
        }
        self.pos += word.len();
        self.out.extend_from_slice(word);
        Some(())
    }

    /// An object at `pos` (`{`); `system` records the top level's system attributes.
    fn object(
        &mut self,
        depth_left: usize,
        mut system: Option<&mut [Option<Member>; 5]>,
    ) -> Option<()> {
        let depth_left = depth_left.checked_sub(1)?;
        self.pos += 1;
        self.out.push(b'{');
        self.skip_whitespace();
        if self.peek()? == b'}' {
            self.pos += 1;
            self.out.push(b'}');
            return Some(());
        }
        let base = self.names.len();
        loop {
            self.skip_whitespace();
            if self.peek()? != b'"' {
                return None;
            }
            let start = self.out.len();
            self.string()?;
            let name = (start, self.out.len());
            if self.names.len() - base >= OBJECT_MEMBERS_MAX {
                return None;
            }
            let text = &self.out[name.0..name.1];
            if self.names[base..]
                .iter()
                .any(|&(s, e)| &self.out[s..e] == text)
            {
                return None;
            }
            self.names.push(name);
            self.skip_whitespace();
            if self.next()? != b':' {
                return None;
            }
            self.out.push(b':');
            self.skip_whitespace();
            let value = self.out.len();
            self.value(depth_left)?;
            if let Some(system) = system.as_deref_mut() {
                let name = &self.out[name.0..name.1];
                if let Some(which) = SystemAttribute::ALL.iter().find(|a| a.quoted() == name) {
                    system[*which as usize] = Some(Member {
                        start,
                        value,
                        end: self.out.len(),
                    });
                }
            }
            self.skip_whitespace();
            match self.next()? {
                b',' => self.out.push(b','),
                b'}' => break,
                _ => return None,
            }
        }
        self.out.push(b'}');
        self.names.truncate(base);
        Some(())
    }

    fn array(&mut self, depth_left: usize) -> Option<()> {
        let depth_left = depth_left.checked_sub(1)?;
        self.pos += 1;
        self.out.push(b'[');
        self.skip_whitespace();
        if self.peek()? == b']' {
            self.pos += 1;
            self.out.push(b']');
            return Some(());
        }
        loop {
            self.skip_whitespace();
            self.value(depth_left)?;
            self.skip_whitespace();
            match self.next()? {
                b',' => self.out.push(b','),
                b']' => break,
                _ => return None,
            }
        }
        self.out.push(b']');
        Some(())
    }

    /// A string at `pos` (`"`): copied when it has no escapes (after the UTF-8 check), else
    /// decoded and written again by serde_json, as the slow route does.
    fn string(&mut self) -> Option<()> {
        let start = self.pos;
        let mut i = start + 1;
        let mut escaped = false;
        loop {
            // Skip the bytes that are copied as they are, then look at the one that is not.
            while !STRING_STOPS[usize::from(*self.input.get(i)?)] {
                i += 1;
            }
            match self.input[i] {
                b'"' => break,
                b'\\' => {
                    escaped = true;
                    i += 2;
                }
                _ => return None,
            }
        }
        let literal = &self.input[start..=i];
        self.pos = i + 1;
        if escaped {
            let mut de = serde_json::Deserializer::from_slice(literal);
            serde::Deserializer::deserialize_str(&mut de, WriteString(&mut self.out)).ok()?;
        } else {
            std::str::from_utf8(&literal[1..literal.len() - 1]).ok()?;
            self.out.extend_from_slice(literal);
        }
        Some(())
    }

    /// A number at `pos`: small integers are copied; any other number (fractions, exponents,
    /// big integers, `-0`) is read and written again by serde_json, as the slow route does.
    fn number(&mut self) -> Option<()> {
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        match self.next()? {
            b'0' => {}
            b'1'..=b'9' => self.digits(),
            _ => return None,
        }
        let mut simple = true;
        if self.peek() == Some(b'.') {
            simple = false;
            self.pos += 1;
            self.some_digits()?;
        }
        if let Some(b'e' | b'E') = self.peek() {
            simple = false;
            self.pos += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.pos += 1;
            }
            self.some_digits()?;
        }
        let token = &self.input[start..self.pos];
        // At most 18 characters: the value fits both i64 and u64, so serde_json writes it back
        // digit for digit.
        if simple && token.len() <= 18 && token != b"-0" {
            self.out.extend_from_slice(token);
        } else {
            // Each costs a serde_json call of its own, several times what the slow route
            // spends on a number: a body dense in such numbers takes the slow route.
            self.rewritten_numbers += 1;
            if self.rewritten_numbers > REWRITTEN_NUMBERS_FREE
                && self.rewritten_numbers * BYTES_PER_REWRITTEN_NUMBER > self.pos
            {
                return None;
            }
            let value: Value = serde_json::from_slice(token).ok()?;
            let at = self.out.len();
            serde_json::to_writer(&mut self.out, &value).ok()?;
            // serde_json's float reading is not exact (no `float_roundtrip`): the text written
            // may read back as a neighbouring float. The slow route stores that same text, but
            // the text must also read back as the body's value ([`ObjectText::to_object`]).
            // Text written as the body spelled it reads back as the body did, unread again
            // (the usual float: reading every one twice made float arrays ~1.8x slower than
            // the slow route).
            if self.out[at..] != *token {
                let again: Value = serde_json::from_slice(&self.out[at..]).ok()?;
                if again != value {
                    return None;
                }
            }
        }
        Some(())
    }

    fn digits(&mut self) {
        while let Some(b'0'..=b'9') = self.peek() {
            self.pos += 1;
        }
    }

    fn some_digits(&mut self) -> Option<()> {
        let from = self.pos;
        self.digits();
        (self.pos > from).then_some(())
    }
}

#[cfg(test)]
mod tests;
