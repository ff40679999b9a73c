//! Authentication: from an `Authorization` header to a [`Caller`].
//!
//! What it is: [`Authenticator`], which reads HTTP Basic (a user's password, or an access
//! token as the password, the user then optional) and `bearer` JSON Web Tokens (superuser
//! tokens with `server_id`, user tokens), and the pipeline's two steps: [`identify`] (what the
//! credentials say, no slow work) and [`resolve`] (taken once the request holds its unit of the
//! queue bound: runs the slow password check off the async workers, a bounded number at a
//! time, counts failed logins in the metrics and logs them, user name and client address,
//! never the password).
//!
//! What it is not: permissions ([`crate::permission`]) or accounts (`quince_auth::Users`).
//!
//! Invariants: the scheme is matched case-insensitively and anything but `basic` and
//! `bearer` is refused; a token's algorithm is pinned to HS256 (`quince_auth::TokenKeys`);
//! a user token is good only while its user exists, is active and keeps the token's
//! generation; steady-state Basic authentication does not hash (a verified password is
//! remembered until the account changes); an empty or missing credential never
//! authenticates anybody while authentication is on.

use std::sync::Arc;

use base64::Engine;
use http::{Extensions, HeaderMap, HeaderValue};
use quince_auth::{access_token::looks_like_token, Account, Claims, TokenKeys, Users};

use quince_errors::{ArangoError, QUEUE_FULL};

use crate::limits::TOKEN_LIFETIME_SECS;
use crate::permission::Caller;
use crate::pipeline::{Api, Peer};

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
    keys: TokenKeys,
}

impl Authenticator {
    /// An authenticator with these token secrets (the first signs, all verify).
    pub fn new(secrets: &[Vec<u8>]) -> Self {
        Authenticator {
            keys: TokenKeys::new(secrets, TOKEN_LIFETIME_SECS),
        }
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
            return match self.keys.verify(token) {
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
        self.keys.issue(&account.name, account.generation)
    }
}

fn refused(user: &str, reason: &'static str) -> Identity {
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

/// The pipeline's first authentication step, with no slow work: what the credentials say.
/// With authentication off, everybody is a superuser.
pub(crate) fn identify(api: &Api, headers: &HeaderMap) -> Identity {
    if !api.config().authentication {
        return Identity::Superuser;
    }
    api.authenticator()
        .identify(api.users(), headers.get(http::header::AUTHORIZATION))
}

/// The pipeline's second authentication step, taken once the request holds its unit of the
/// queue bound: the caller, or `None` for credentials that do not check out (counted and
/// logged). Without credentials the caller is nobody. A password is checked off the async
/// workers, and only [`crate::limits::PASSWORD_CHECKS_MAX`] at a time wait for it: beyond that 503/21003, so
/// guessing passwords cannot occupy the whole queue.
pub(crate) async fn resolve(
    api: &Api,
    identity: Identity,
    extensions: &Extensions,
) -> Result<Option<Caller>, ArangoError> {
    let identity = match identity {
        Identity::Password { user, password } => {
            let checked = check_password(api, &user, password).await?;
            match checked {
                Some(account) => Identity::User(account),
                None => refused(&user, "wrong password, or unknown or inactive user"),
            }
        }
        other => other,
    };
    Ok(match identity {
        Identity::Superuser => Some(Caller::superuser()),
        Identity::User(account) => Some(Caller::user(account)),
        Identity::Anonymous => Some(Caller::nobody()),
        Identity::Refused { user, reason } => {
            record_failed_login(api, extensions, &user, reason);
            None
        }
        Identity::Password { .. } => unreachable!("resolved above"),
    })
}

/// Checks `password` for `user` on the blocking pool (Argon2 takes tens of milliseconds), at
/// most [`crate::limits::PASSWORD_CHECKS_MAX`] checks waiting at once (503/21003 beyond).
pub(crate) async fn check_password(
    api: &Api,
    user: &str,
    password: String,
) -> Result<Option<Arc<Account>>, ArangoError> {
    let Ok(_slot) = api.password_checks().try_acquire() else {
        return Err(ArangoError::with_message(
            QUEUE_FULL,
            "queue is full: too many logins are being checked; retry later",
        ));
    };
    let users = Arc::clone(api.users_handle());
    let name = user.to_owned();
    Ok(
        tokio::task::spawn_blocking(move || users.verify_password(&name, &password))
            .await
            .ok()
            .flatten(),
    )
}

/// Counts a failed login and logs it with the user name and the client's address.
pub(crate) fn record_failed_login(api: &Api, extensions: &Extensions, user: &str, reason: &str) {
    api.metrics().record_auth_failure();
    let client = extensions
        .get::<Peer>()
        .map_or_else(|| "unknown".to_string(), |p| p.client.to_string());
    tracing::warn!(event = "auth.failed", user, %client, reason, "authentication failed");
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
