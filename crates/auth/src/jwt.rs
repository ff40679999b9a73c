//! [`TokenKeys`]: the HS256 secrets that sign and verify JSON Web Tokens.
//!
//! What it is: issuing user tokens (`iss`, `iat`, `exp`, `preferred_username`, and `gen`,
//! the user's credential generation) and checking presented ones into [`Claims`]. With a
//! folder of secrets (`--server.jwt-secret-folder`) the first secret signs and every secret
//! verifies, so a secret can be rotated in by adding it first and rotated out later.
//!
//! What it is not: the decision whether a user's token is still good: that needs the account
//! (it must exist, be active and have the token's generation) and is [`crate::Users`]'s.
//!
//! Invariants: only HS256 is accepted (a token naming `none`, `HS512`, `RS256` or anything
//! else is refused before any key is tried); `iss` must be `arangodb`; `exp`, when present,
//! must be in the future (no leeway); a user token (`preferred_username`) must carry `exp`, so
//! no user token is good for ever; a superuser token (`server_id`) may omit it, as ArangoDB's
//! tools mint them, since only the holder of the secret can make one; a token with neither
//! `server_id` nor `preferred_username` is refused.

use std::collections::HashSet;
use std::time::{SystemTime, UNIX_EPOCH};

use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde_json::{json, Value};

/// The issuer of every ArangoDB token.
pub const TOKEN_ISSUER: &str = "arangodb";

/// What a verified token says about its bearer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Claims {
    /// A superuser token (it carries `server_id`): full rights, no user.
    Superuser,
    /// A user's token.
    User {
        /// `preferred_username`.
        name: String,
        /// `gen`, present in tokens Quince issued.
        generation: Option<u64>,
    },
}

/// The secrets of the server's tokens.
pub struct TokenKeys {
    /// Signs issued tokens (the first secret).
    signing: EncodingKey,
    /// Verify presented tokens (every secret, the signing one first).
    verifying: Vec<DecodingKey>,
    /// HS256, issuer `arangodb`, `exp` checked when present, no leeway.
    validation: Validation,
    /// Lifetime of issued tokens, in seconds.
    lifetime_secs: u64,
}

impl TokenKeys {
    /// Keys from `secrets` (the first signs; at least one, none empty).
    pub fn new(secrets: &[Vec<u8>], lifetime_secs: u64) -> TokenKeys {
        assert!(!secrets.is_empty(), "at least one token secret");
        assert!(
            secrets.iter().all(|s| !s.is_empty()),
            "token secrets are not empty"
        );
        let mut validation = Validation::new(Algorithm::HS256);
        // `exp` is checked when present but not required: superuser tokens made by tools
        // often carry none, and ArangoDB accepts them.
        validation.required_spec_claims = HashSet::new();
        validation.validate_exp = true;
        validation.leeway = 0;
        validation.validate_aud = false;
        validation.set_issuer(&[TOKEN_ISSUER]);
        TokenKeys {
            signing: EncodingKey::from_secret(&secrets[0]),
            verifying: secrets
                .iter()
                .map(|s| DecodingKey::from_secret(s))
                .collect(),
            validation,
            lifetime_secs,
        }
    }

    /// A token for `user` with credential generation `generation`, valid for the lifetime
    /// from now.
    pub fn issue(&self, user: &str, generation: u64) -> String {
        let now = unix_now_secs();
        let claims = json!({
            "iss": TOKEN_ISSUER,
            "iat": now,
            "exp": now + self.lifetime_secs,
            "preferred_username": user,
            "gen": generation,
        });
        jsonwebtoken::encode(&Header::new(Algorithm::HS256), &claims, &self.signing)
            .expect("HS256 signing of a JSON object cannot fail")
    }

    /// The claims of a token signed by one of the secrets, or `None`.
    pub fn verify(&self, token: &str) -> Option<Claims> {
        let token = token.trim();
        // The header is checked first so that no key is ever tried with another algorithm.
        let header = jsonwebtoken::decode_header(token).ok()?;
        if header.alg != Algorithm::HS256 {
            return None;
        }
        let claims = self.verifying.iter().find_map(|key| {
            jsonwebtoken::decode::<Value>(token, key, &self.validation)
                .ok()
                .map(|data| data.claims)
        })?;
        // The library validates the issuer; it is checked again so that a change of its
        // defaults cannot silently widen what is accepted.
        if claims.get("iss").and_then(Value::as_str) != Some(TOKEN_ISSUER) {
            return None;
        }
        if claims.get("server_id").is_some_and(Value::is_string) {
            return Some(Claims::Superuser);
        }
        let name = claims.get("preferred_username")?.as_str()?;
        if name.is_empty() || !claims.get("exp").is_some_and(Value::is_number) {
            return None;
        }
        Some(Claims::User {
            name: name.to_owned(),
            generation: claims.get("gen").and_then(Value::as_u64),
        })
    }
}

/// The SHA-256 of a token secret, hex: how `/_admin/server/jwt` names a secret without
/// showing it.
pub fn secret_sha256(secret: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(secret)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Seconds since the Unix epoch.
pub fn unix_now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use base64::Engine;

    use super::*;

    const LIFETIME: u64 = 3600;

    fn keys() -> TokenKeys {
        TokenKeys::new(&[b"secret".to_vec()], LIFETIME)
    }

    fn sign(claims: Value, alg: Algorithm, secret: &[u8]) -> String {
        jsonwebtoken::encode(
            &Header::new(alg),
            &claims,
            &EncodingKey::from_secret(secret),
        )
        .unwrap()
    }

    #[test]
    fn issued_tokens_verify_and_carry_what_drivers_read() {
        let k = keys();
        let token = k.issue("alice", 9);
        assert_eq!(
            k.verify(&token),
            Some(Claims::User {
                name: "alice".into(),
                generation: Some(9)
            })
        );
        let payload = token.split('.').nth(1).unwrap();
        let claims: Value = serde_json::from_slice(
            &base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(payload)
                .unwrap(),
        )
        .unwrap();
        assert_eq!(claims["iss"], "arangodb");
        assert_eq!(claims["preferred_username"], "alice");
        let (iat, exp) = (
            claims["iat"].as_u64().unwrap(),
            claims["exp"].as_u64().unwrap(),
        );
        assert_eq!(exp - iat, LIFETIME);
    }

    #[test]
    fn superuser_tokens_need_only_server_id() {
        let now = unix_now_secs();
        let k = keys();
        let with_exp = sign(
            json!({"iss": "arangodb", "server_id": "x", "iat": now, "exp": now + 60}),
            Algorithm::HS256,
            b"secret",
        );
        assert_eq!(k.verify(&with_exp), Some(Claims::Superuser));
        let no_exp = sign(
            json!({"iss": "arangodb", "server_id": "x"}),
            Algorithm::HS256,
            b"secret",
        );
        assert_eq!(k.verify(&no_exp), Some(Claims::Superuser));
    }

    #[test]
    fn user_tokens_without_exp_are_refused() {
        let k = keys();
        let forever = sign(
            json!({"iss": "arangodb", "preferred_username": "alice"}),
            Algorithm::HS256,
            b"secret",
        );
        assert_eq!(k.verify(&forever), None);
        let bad_exp = sign(
            json!({"iss": "arangodb", "preferred_username": "alice", "exp": "never"}),
            Algorithm::HS256,
            b"secret",
        );
        assert_eq!(k.verify(&bad_exp), None);
    }

    #[test]
    fn forged_expired_and_foreign_tokens_are_refused() {
        let now = unix_now_secs();
        let k = keys();
        let good = json!({"iss": "arangodb", "server_id": "x", "exp": now + 60});
        assert_eq!(
            k.verify(&sign(good.clone(), Algorithm::HS256, b"other")),
            None
        );
        assert_eq!(
            k.verify(&sign(good.clone(), Algorithm::HS512, b"secret")),
            None
        );
        assert_eq!(
            k.verify(&sign(good.clone(), Algorithm::HS384, b"secret")),
            None
        );
        let expired = json!({"iss": "arangodb", "server_id": "x", "exp": now - 1});
        assert_eq!(k.verify(&sign(expired, Algorithm::HS256, b"secret")), None);
        let wrong_iss = json!({"iss": "someone", "server_id": "x"});
        assert_eq!(
            k.verify(&sign(wrong_iss, Algorithm::HS256, b"secret")),
            None
        );
        let nobody = json!({"iss": "arangodb", "exp": now + 60});
        assert_eq!(k.verify(&sign(nobody, Algorithm::HS256, b"secret")), None);
        let empty_name = json!({"iss": "arangodb", "preferred_username": ""});
        assert_eq!(
            k.verify(&sign(empty_name, Algorithm::HS256, b"secret")),
            None
        );
        assert_eq!(k.verify("not.a.token"), None);
        assert_eq!(k.verify(""), None);
        // `alg: none` with no signature.
        let b64 = |v: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v);
        let unsigned = format!(
            "{}.{}.",
            b64(r#"{"alg":"none","typ":"JWT"}"#),
            b64(r#"{"iss":"arangodb","server_id":"x"}"#)
        );
        assert_eq!(k.verify(&unsigned), None);
        // An RS256 header over an HMAC signature (the classic key-confusion attempt).
        let hs = sign(good, Algorithm::HS256, b"secret");
        let mut parts: Vec<&str> = hs.split('.').collect();
        let rs_header = b64(r#"{"alg":"RS256","typ":"JWT"}"#);
        parts[0] = &rs_header;
        assert_eq!(k.verify(&parts.join(".")), None);
    }

    #[test]
    fn secret_digests_are_sha256_hex() {
        assert_eq!(
            secret_sha256(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn the_first_secret_signs_and_every_secret_verifies() {
        let rotated = TokenKeys::new(&[b"new".to_vec(), b"old".to_vec()], LIFETIME);
        let old_only = TokenKeys::new(&[b"old".to_vec()], LIFETIME);
        let new_only = TokenKeys::new(&[b"new".to_vec()], LIFETIME);
        let from_old = old_only.issue("bob", 1);
        assert!(
            rotated.verify(&from_old).is_some(),
            "old tokens still verify"
        );
        let from_rotated = rotated.issue("bob", 1);
        assert!(
            new_only.verify(&from_rotated).is_some(),
            "the first secret signs"
        );
        assert!(old_only.verify(&from_rotated).is_none());
    }
}
