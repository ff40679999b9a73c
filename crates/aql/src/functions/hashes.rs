//! Hashes, encodings and random strings: `MD5`, `SHA1`, `SHA256`, `SHA512`, `CRC32`,
//! `FNV64`, `HASH`, `TO_BASE64`, `TO_HEX`, `ENCODE_URI_COMPONENT`, `RANDOM_TOKEN`, `UUID`.
//!
//! What it is: digests of the argument's text (`TO_STRING`) in ArangoDB's spelling:
//! lower-case hex for the cryptographic digests, upper-case hex without leading zeros for
//! `CRC32` (CRC-32C) and `FNV64` (FNV-1a, 64 bits).
//!
//! What it is not: `MINHASH`, whose hash family is ArangoDB's own (listed unsupported).
//!
//! Invariants: `HASH` depends only on the value as AQL compares it (equal values hash
//! equally, whatever the attribute order) and fits in 52 bits, so it is exact as a double.

use std::fmt::Write;

use base64::Engine;
use md5::Digest;
use quince_errors::Result;
use rand::Rng;
use serde_json::Value;

use super::args::{arg, invalid};
use super::FunctionContext;
use crate::value::{hash_key, to_string_value};

type Out = Result<Value>;

fn text(args: &[Value]) -> String {
    to_string_value(arg(args, 0))
}

fn hex(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(out, "{b:02x}");
    }
    out
}

pub fn md5(_: &mut dyn FunctionContext, args: &[Value]) -> Out {
    Ok(Value::String(hex(&md5::Md5::digest(text(args).as_bytes()))))
}

pub fn sha1(_: &mut dyn FunctionContext, args: &[Value]) -> Out {
    Ok(Value::String(hex(&sha1::Sha1::digest(
        text(args).as_bytes(),
    ))))
}

pub fn sha256(_: &mut dyn FunctionContext, args: &[Value]) -> Out {
    Ok(Value::String(hex(&sha2::Sha256::digest(
        text(args).as_bytes(),
    ))))
}

pub fn sha512(_: &mut dyn FunctionContext, args: &[Value]) -> Out {
    Ok(Value::String(hex(&sha2::Sha512::digest(
        text(args).as_bytes(),
    ))))
}

pub fn crc32(_: &mut dyn FunctionContext, args: &[Value]) -> Out {
    Ok(Value::String(format!(
        "{:X}",
        crc32c::crc32c(text(args).as_bytes())
    )))
}

fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        hash ^= u64::from(*b);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

pub fn fnv64(_: &mut dyn FunctionContext, args: &[Value]) -> Out {
    Ok(Value::String(format!(
        "{:X}",
        fnv1a64(text(args).as_bytes())
    )))
}

pub fn hash(_: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let key = hash_key(arg(args, 0));
    Ok(Value::from(fnv1a64(key.as_bytes()) & ((1u64 << 52) - 1)))
}

pub fn to_base64(_: &mut dyn FunctionContext, args: &[Value]) -> Out {
    Ok(Value::String(
        base64::engine::general_purpose::STANDARD.encode(text(args)),
    ))
}

pub fn to_hex(_: &mut dyn FunctionContext, args: &[Value]) -> Out {
    Ok(Value::String(hex(text(args).as_bytes())))
}

/// `ENCODE_URI_COMPONENT`: JavaScript's `encodeURIComponent`: everything but letters,
/// digits and `-_.!~*'()` percent-encoded as UTF-8, upper-case hex.
pub fn encode_uri_component(_: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let mut out = String::new();
    for b in text(args).bytes() {
        if b.is_ascii_alphanumeric() || b"-_.!~*'()".contains(&b) {
            out.push(char::from(b));
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    Ok(Value::String(out))
}

/// The longest `RANDOM_TOKEN`.
const RANDOM_TOKEN_LENGTH_MAX: f64 = 65536.0;

pub fn random_token(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let length = match arg(args, 0) {
        Value::Number(n) => n.as_f64().unwrap_or(-1.0),
        _ => return invalid(ctx, "RANDOM_TOKEN"),
    };
    if !(0.0..=RANDOM_TOKEN_LENGTH_MAX).contains(&length) {
        return invalid(ctx, "RANDOM_TOKEN");
    }
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let mut rng = rand::thread_rng();
    let token: String = (0..length as usize)
        .map(|_| char::from(ALPHABET[rng.gen_range(0..ALPHABET.len())]))
        .collect();
    Ok(Value::String(token))
}

pub fn uuid(_: &mut dyn FunctionContext, _: &[Value]) -> Out {
    Ok(Value::String(uuid::Uuid::new_v4().to_string()))
}
