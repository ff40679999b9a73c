//! Authentication of the root user: HTTP Basic and HS256 JSON Web Tokens.
//!
//! What it is: [`Authenticator`], which turns an `Authorization` header into a [`Caller`] and
//! issues the tokens of `POST /_open/auth`. Basic credentials are compared in constant time;
//! tokens are accepted only when signed with HS256 by the server's secret, with
//! `iss = "arangodb"`, an `exp` in the future when present, and either a `server_id` claim
//! (a superuser token) or `preferred_username = "root"`.
//!
//! What it is not: users and permissions. Only `root` exists until the users issue lands;
//! any other name is refused.
//!
//! Invariants: the accepted algorithm is pinned to HS256 (a token naming another algorithm,
//! `none` included, is refused); an empty or missing credential is never root while
//! authentication is on.

use std::collections::HashSet;
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine;
use http::HeaderValue;
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde_json::{json, Value};

use crate::limits::TOKEN_LIFETIME_SECS;

/// The only user until user accounts exist.
pub const ROOT_USER: &str = "root";

/// The issuer every ArangoDB token carries.
const TOKEN_ISSUER: &str = "arangodb";

/// Who sent a request, as far as its credentials say.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Caller {
    /// Root (Basic with root's password, a root token, or a superuser token).
    Root,
    /// No `Authorization` header at all.
    Anonymous,
    /// Credentials that do not check out (wrong password, bad signature, expired token,
    /// unknown scheme or user).
    Refused,
}

/// Checks credentials against root's password and the token secret.
pub struct Authenticator {
    /// Root's password (`--database.password` or the environment).
    root_password: String,
    /// Signs issued tokens.
    encoding_key: EncodingKey,
    /// Verifies presented tokens.
    decoding_key: DecodingKey,
    /// HS256 only, issuer `arangodb`, `exp` checked when present, no leeway.
    validation: Validation,
}

impl Authenticator {
    /// An authenticator for root with this password and token secret.
    pub fn new(root_password: &str, jwt_secret: &[u8]) -> Self {
        let mut validation = Validation::new(Algorithm::HS256);
        // `exp` is checked when present but not required: superuser tokens made by tools
        // often carry none, and ArangoDB accepts them.
        validation.required_spec_claims = HashSet::new();
        validation.validate_exp = true;
        validation.leeway = 0;
        validation.validate_aud = false;
        validation.set_issuer(&[TOKEN_ISSUER]);
        Authenticator {
            root_password: root_password.to_string(),
            encoding_key: EncodingKey::from_secret(jwt_secret),
            decoding_key: DecodingKey::from_secret(jwt_secret),
            validation,
        }
    }

    /// Classifies the credentials of one request.
    pub fn check(&self, authorization: Option<&HeaderValue>) -> Caller {
        let Some(value) = authorization else {
            return Caller::Anonymous;
        };
        let Ok(text) = value.to_str() else {
            return Caller::Refused;
        };
        let text = text.trim();
        if let Some(encoded) = strip_scheme(text, "basic") {
            return self.check_basic(encoded);
        }
        if let Some(token) = strip_scheme(text, "bearer") {
            return self.check_token(token);
        }
        Caller::Refused
    }

    /// True when `user`/`password` are root's credentials.
    pub fn password_matches(&self, user: &str, password: &str) -> bool {
        // Both comparisons always run, so timing does not tell which one failed.
        let user_ok = constant_time_eq(user.as_bytes(), ROOT_USER.as_bytes());
        let password_ok = constant_time_eq(password.as_bytes(), self.root_password.as_bytes());
        user_ok & password_ok
    }

    /// A token for `user`, valid for [`TOKEN_LIFETIME_SECS`] from now.
    pub fn issue_token(&self, user: &str) -> String {
        let now = unix_now_secs();
        let claims = json!({
            "iss": TOKEN_ISSUER,
            "iat": now,
            "exp": now + TOKEN_LIFETIME_SECS,
            "preferred_username": user,
        });
        jsonwebtoken::encode(&Header::new(Algorithm::HS256), &claims, &self.encoding_key)
            .expect("HS256 signing of a JSON object cannot fail")
    }

    fn check_basic(&self, encoded: &str) -> Caller {
        let Ok(decoded) = base64::engine::general_purpose::STANDARD.decode(encoded.trim()) else {
            return Caller::Refused;
        };
        let Ok(text) = std::str::from_utf8(&decoded) else {
            return Caller::Refused;
        };
        let (user, password) = text.split_once(':').unwrap_or((text, ""));
        if self.password_matches(user, password) {
            Caller::Root
        } else {
            Caller::Refused
        }
    }

    fn check_token(&self, token: &str) -> Caller {
        let Ok(data) =
            jsonwebtoken::decode::<Value>(token.trim(), &self.decoding_key, &self.validation)
        else {
            return Caller::Refused;
        };
        let claims = &data.claims;
        // The issuer is validated by the library; checked again so a change of its defaults
        // cannot silently widen what is accepted.
        if claims.get("iss").and_then(Value::as_str) != Some(TOKEN_ISSUER) {
            return Caller::Refused;
        }
        if claims.get("server_id").is_some_and(Value::is_string) {
            return Caller::Root;
        }
        match claims.get("preferred_username").and_then(Value::as_str) {
            Some(ROOT_USER) => Caller::Root,
            _ => Caller::Refused,
        }
    }
}

/// The rest of `text` after `scheme ` (scheme matched case-insensitively).
fn strip_scheme<'a>(text: &'a str, scheme: &str) -> Option<&'a str> {
    let head = text.get(..scheme.len())?;
    let rest = &text[scheme.len()..];
    (head.eq_ignore_ascii_case(scheme) && rest.starts_with(' ')).then(|| rest.trim_start())
}

/// Compares two byte strings in time that depends only on their lengths.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    let mut diff = a.len() ^ b.len();
    for i in 0..a.len().max(b.len()) {
        let x = a.get(i).copied().unwrap_or(0);
        let y = b.get(i).copied().unwrap_or(0);
        diff |= usize::from(x ^ y);
    }
    diff == 0
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
    use super::*;

    const SECRET: &[u8] = b"secret";

    fn auth() -> Authenticator {
        Authenticator::new("pw", SECRET)
    }

    fn header(text: &str) -> HeaderValue {
        HeaderValue::from_str(text).unwrap()
    }

    fn basic(user_pass: &str) -> HeaderValue {
        let enc = base64::engine::general_purpose::STANDARD.encode(user_pass);
        header(&format!("Basic {enc}"))
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
    fn basic_root_with_the_right_password_is_root() {
        assert_eq!(auth().check(Some(&basic("root:pw"))), Caller::Root);
        // The scheme is case-insensitive.
        let enc = base64::engine::general_purpose::STANDARD.encode("root:pw");
        assert_eq!(
            auth().check(Some(&header(&format!("bAsIc {enc}")))),
            Caller::Root
        );
    }

    #[test]
    fn wrong_or_missing_credentials_are_not_root() {
        let a = auth();
        assert_eq!(a.check(None), Caller::Anonymous);
        assert_eq!(a.check(Some(&basic("root:wrong"))), Caller::Refused);
        assert_eq!(a.check(Some(&basic("root:pw2"))), Caller::Refused);
        assert_eq!(a.check(Some(&basic("other:pw"))), Caller::Refused);
        assert_eq!(a.check(Some(&basic("root"))), Caller::Refused);
        assert_eq!(a.check(Some(&header("Basic !!!"))), Caller::Refused);
        assert_eq!(a.check(Some(&header("Digest abc"))), Caller::Refused);
    }

    #[test]
    fn empty_password_works_only_when_it_is_roots() {
        let a = Authenticator::new("", SECRET);
        assert_eq!(a.check(Some(&basic("root:"))), Caller::Root);
        assert_eq!(a.check(Some(&basic("root"))), Caller::Root);
        assert_eq!(a.check(Some(&basic("root:x"))), Caller::Refused);
    }

    #[test]
    fn superuser_and_root_tokens_are_root() {
        let a = auth();
        let now = unix_now_secs();
        let su = sign(
            json!({"iss":"arangodb","server_id":"client","iat":now,"exp":now+60}),
            Algorithm::HS256,
            SECRET,
        );
        assert_eq!(
            a.check(Some(&header(&format!("bearer {su}")))),
            Caller::Root
        );
        let no_exp = sign(
            json!({"iss":"arangodb","server_id":"x"}),
            Algorithm::HS256,
            SECRET,
        );
        assert_eq!(
            a.check(Some(&header(&format!("Bearer {no_exp}")))),
            Caller::Root
        );
        let issued = a.issue_token("root");
        assert_eq!(
            a.check(Some(&header(&format!("bearer {issued}")))),
            Caller::Root
        );
    }

    #[test]
    fn bad_tokens_are_refused() {
        let a = auth();
        let now = unix_now_secs();
        let refused = |claims: Value, alg: Algorithm, secret: &[u8]| {
            let t = sign(claims, alg, secret);
            a.check(Some(&header(&format!("bearer {t}"))))
        };
        let good = json!({"iss":"arangodb","server_id":"x","exp":now+60});
        assert_eq!(
            refused(good.clone(), Algorithm::HS256, b"other"),
            Caller::Refused
        );
        assert_eq!(
            refused(good.clone(), Algorithm::HS512, SECRET),
            Caller::Refused
        );
        let expired = json!({"iss":"arangodb","server_id":"x","exp":now-10});
        assert_eq!(refused(expired, Algorithm::HS256, SECRET), Caller::Refused);
        let wrong_iss = json!({"iss":"someone","server_id":"x"});
        assert_eq!(
            refused(wrong_iss, Algorithm::HS256, SECRET),
            Caller::Refused
        );
        let no_iss = json!({"server_id":"x"});
        assert_eq!(refused(no_iss, Algorithm::HS256, SECRET), Caller::Refused);
        let other_user = json!({"iss":"arangodb","preferred_username":"bob"});
        assert_eq!(
            refused(other_user, Algorithm::HS256, SECRET),
            Caller::Refused
        );
        assert_eq!(
            a.check(Some(&header("bearer not.a.token"))),
            Caller::Refused
        );
    }

    #[test]
    fn unsigned_tokens_are_refused() {
        // A token whose header names `none` and carries no signature.
        let b64 = |v: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v);
        let token = format!(
            "{}.{}.",
            b64(r#"{"alg":"none","typ":"JWT"}"#),
            b64(r#"{"iss":"arangodb","server_id":"x"}"#)
        );
        assert_eq!(
            auth().check(Some(&header(&format!("bearer {token}")))),
            Caller::Refused
        );
    }

    #[test]
    fn issued_tokens_carry_the_claims_drivers_require() {
        let token = auth().issue_token("root");
        let mut v = Validation::new(Algorithm::HS256);
        v.set_issuer(&["arangodb"]);
        let data =
            jsonwebtoken::decode::<Value>(&token, &DecodingKey::from_secret(SECRET), &v).unwrap();
        let c = data.claims;
        assert_eq!(c["preferred_username"], "root");
        let (iat, exp) = (c["iat"].as_u64().unwrap(), c["exp"].as_u64().unwrap());
        assert_eq!(exp - iat, TOKEN_LIFETIME_SECS);
    }

    #[test]
    fn constant_time_eq_compares_contents_and_lengths() {
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"abcd"));
        assert!(!constant_time_eq(b"", b"\0"));
        assert!(constant_time_eq(b"", b""));
    }
}
