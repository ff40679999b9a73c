//! Authentication: from an `Authorization` header to a [`Caller`].
//!
//! What it is: the pipeline's two steps over the API's
//! [`Authenticator`](crate::credentials::Authenticator): [`identify`] (what the credentials say, no slow work) and
//! [`resolve`] (taken once the request holds its unit of the queue bound: runs the slow
//! password check off the async workers, a bounded number at a time, counts failed logins in
//! the metrics and logs them, user name and client address, never the password); and
//! [`check_password`] and [`record_failed_login`], which `/_open/auth` shares.
//!
//! What it is not: reading the header (`crate::credentials`), permissions
//! ([`crate::permission`]) or accounts (`quince_auth::Users`). Like the state it reads, it sits
//! below the endpoint families and imports none of them.
//!
//! Invariants: with authentication off everybody is a superuser; with it on, an empty or
//! missing credential never authenticates anybody; at most
//! [`crate::limits::PASSWORD_CHECKS_MAX`] password checks wait or run at once; a password is
//! never logged.

use std::sync::Arc;

use http::{Extensions, HeaderMap};
use quince_auth::Account;
use quince_errors::{ArangoError, QUEUE_FULL};

use crate::credentials::{refused, Identity};
use crate::permission::Caller;
use crate::state::{Api, Peer};

/// The pipeline's first authentication step, with no slow work: what the credentials say.
/// With authentication off, everybody is a superuser.
pub(crate) fn identify(api: &Api, headers: &HeaderMap) -> Identity {
    if !api.config().authentication {
        return Identity::Superuser;
    }
    let identity = api
        .authenticator()
        .identify(api.users(), headers.get(http::header::AUTHORIZATION));
    match (identity, headers.get(quince_ops::FORWARDED_FOR)) {
        // Another coordinator passed on a client's request (`forwarding.rs`): it acts for the
        // user that coordinator authenticated, which only the cluster's superuser may say.
        (Identity::Superuser, Some(user)) => {
            let user = String::from_utf8_lossy(user.as_bytes()).into_owned();
            match api.users().account(&user).filter(|account| account.active) {
                Some(account) => Identity::User(account),
                None => Identity::Refused {
                    user,
                    reason: "a forwarded request names an unknown or inactive user",
                },
            }
        }
        (identity, _) => identity,
    }
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
