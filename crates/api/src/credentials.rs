//! Credentials: what an `Authorization` header says, and the [`Authenticator`] that reads it
//! and issues tokens.
//!
//! What it is: [`Authenticator`] (held by the API's state), which reads HTTP Basic (a user's
//! password, or an access token as the password, the user then optional) and `bearer` JSON Web
//! Tokens (superuser tokens with `server_id`, user tokens), and classifies them as an
//! [`Identity`] without any slow work.
//! Its token secrets are swapped whole at runtime (`POST /_admin/server/jwt`): a request sees
//! either the old set or the new one, never a mix.
//!
//! What it is not: the pipeline's authentication steps (`crate::auth` runs the slow password
//! check, counts and logs failures), permissions ([`crate::permission`]) or accounts
//! (`quince_auth::Users`).
//!
//! Invariants: the scheme is matched case-insensitively and anything but `basic` and
//! `bearer` is refused; a token's algorithm is pinned to HS256 (`quince_auth::TokenKeys`);
//! a user token is good only while its user exists, is active and keeps the token's
//! generation; classifying never hashes a password (a verified password is remembered until
//! the account changes; any other password is left for the slow check); an empty or missing
//! credential never authenticates anybody.

use std::sync::Arc;

use base64::Engine;
use http::HeaderValue;
use parking_lot::RwLock;
use quince_auth::{
    access_token::looks_like_token, secret_sha256, Account, Claims, TokenKeys, Users,
};

use crate::limits::TOKEN_LIFETIME_SECS;

/// What the credentials of a request say, before any slow check.
#[derive(Debug)]
pub(crate) enum Identity {
    /// A superuser token.
    Superuser,
    /// A user whose credentials checked out without hashing.
    User(Arc<Account>),
    /// A Basic user name and password that need the slow check.
    Password { user: String, password: String },
    /// No `Authorization` header.
    Anonymous,
    /// Credentials that do not check out.
    Refused {
        /// The user name the credentials named, if any (for the log).
        user: String,
        /// Why, for the log.
        reason: &'static str,
    },
}

/// Reads credentials and issues tokens.
pub struct Authenticator {
    /// The token secrets in use; swapped whole by [`Authenticator::replace_secrets`].
    keys: RwLock<Arc<Secrets>>,
}

/// One generation of token secrets: the keys, and the SHA-256 of each secret.
struct Secrets {
    keys: TokenKeys,
    /// The signing secret's digest.
    active: String,
    /// The other secrets' digests, in order.
    passive: Vec<String>,
}

impl Secrets {
    fn new(secrets: &[Vec<u8>]) -> Secrets {
        Secrets {
            keys: TokenKeys::new(secrets, TOKEN_LIFETIME_SECS),
            active: secret_sha256(&secrets[0]),
            passive: secrets[1..].iter().map(|s| secret_sha256(s)).collect(),
        }
    }
}

impl Authenticator {
    /// An authenticator with these token secrets (the first signs, all verify).
    pub fn new(secrets: &[Vec<u8>]) -> Self {
        Authenticator {
            keys: RwLock::new(Arc::new(Secrets::new(secrets))),
        }
    }

    /// Swaps in new token secrets (the first signs, all verify): from the next request on,
    /// tokens of a removed secret no longer verify. `secrets` is not empty and holds no empty
    /// secret.
    pub(crate) fn replace_secrets(&self, secrets: &[Vec<u8>]) {
        let next = Arc::new(Secrets::new(secrets));
        *self.keys.write() = next;
    }

    /// The SHA-256 of the signing secret and of the other secrets.
    pub(crate) fn secret_digests(&self) -> (String, Vec<String>) {
        let secrets = self.keys.read().clone();
        (secrets.active.clone(), secrets.passive.clone())
    }

    fn current(&self) -> Arc<Secrets> {
        self.keys.read().clone()
    }

    /// Classifies the credentials of one request.
    pub(crate) fn identify(&self, users: &Users, authorization: Option<&HeaderValue>) -> Identity {
        let Some(value) = authorization else {
            return Identity::Anonymous;
        };
        let Ok(text) = value.to_str() else {
            return refused("", "authorization header is not text");
        };
        let text = text.trim();
        if let Some(encoded) = strip_scheme(text, "basic") {
            return identify_basic(users, encoded);
        }
        if let Some(token) = strip_scheme(text, "bearer") {
            return match self.current().keys.verify(token) {
                Some(Claims::Superuser) => Identity::Superuser,
                Some(Claims::User { name, generation }) => {
                    match users.verify_token_user(&name, generation) {
                        Some(account) => Identity::User(account),
                        None => refused(&name, "token of an unknown, inactive or changed user"),
                    }
                }
                None => refused("", "invalid, expired or foreign token"),
            };
        }
        refused("", "unknown authorization scheme")
    }

    /// A token for `account`, valid for [`TOKEN_LIFETIME_SECS`] from now.
    pub(crate) fn issue_token(&self, account: &Account) -> String {
        self.current().keys.issue(&account.name, account.generation)
    }
}

/// Credentials refused for `reason` (for the log, with the user name they named, if any).
pub(crate) fn refused(user: &str, reason: &'static str) -> Identity {
    Identity::Refused {
        user: user.to_owned(),
        reason,
    }
}

/// Basic credentials: `user:password`, where the password may be an access token (and the
/// user then empty or absent).
fn identify_basic(users: &Users, encoded: &str) -> Identity {
    let Ok(decoded) = base64::engine::general_purpose::STANDARD.decode(encoded.trim()) else {
        return refused("", "basic credentials are not base64");
    };
    let Ok(text) = String::from_utf8(decoded) else {
        return refused("", "basic credentials are not UTF-8");
    };
    let (user, password) = match text.split_once(':') {
        Some((user, password)) => (user, password),
        None if looks_like_token(&text) => ("", text.as_str()),
        None => (text.as_str(), ""),
    };
    if looks_like_token(password) {
        let named = (!user.is_empty()).then_some(user);
        return match users.verify_access_token(named, password) {
            Some(account) => Identity::User(account),
            None => refused(user, "unknown, expired or foreign access token"),
        };
    }
    if user.is_empty() {
        return refused("", "empty user name");
    }
    match users.verified_before(user, password) {
        Some(account) => Identity::User(account),
        None => Identity::Password {
            user: user.to_owned(),
            password: password.to_owned(),
        },
    }
}

/// The rest of `text` after `scheme ` (scheme matched case-insensitively).
fn strip_scheme<'a>(text: &'a str, scheme: &str) -> Option<&'a str> {
    let head = text.get(..scheme.len())?;
    let rest = &text[scheme.len()..];
    (head.eq_ignore_ascii_case(scheme) && rest.starts_with(' ')).then(|| rest.trim_start())
}

impl Identity {
    /// True when resolving it needs the slow password check (Argon2).
    pub(crate) fn needs_password_check(&self) -> bool {
        matches!(self, Identity::Password { .. })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schemes_match_case_insensitively_and_need_a_space() {
        assert_eq!(strip_scheme("Basic abc", "basic"), Some("abc"));
        assert_eq!(strip_scheme("bEaReR  t", "bearer"), Some("t"));
        assert_eq!(strip_scheme("Basicabc", "basic"), None);
        assert_eq!(strip_scheme("Bas", "basic"), None);
        assert_eq!(strip_scheme("Digest abc", "basic"), None);
    }
}
