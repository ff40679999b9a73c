//! Quince's accounts: users, password hashes, permissions, access tokens and token secrets.
//!
//! What it is: [`Users`] (every account, kept in `_system/_users` through
//! `quince_ops::UserDocuments` and in memory), [`Account`] (one user and how its levels
//! resolve), [`Level`] (`none`/`ro`/`rw`), Argon2id password hashing ([`password`]), the
//! cache that makes repeated Basic authentication cheap ([`verified`]), access tokens
//! ([`access_token`]) and the HS256 secrets of JSON Web Tokens ([`TokenKeys`]).
//!
//! What it is not: HTTP. The api crate parses `Authorization` headers, maps requests to the
//! levels they need, and renders errors; this crate answers who someone is and what they may
//! do.
//!
//! Invariants: deny by default (a missing grant is `none`; a damaged stored account
//! authenticates nobody); passwords are never stored, returned or logged; every change to an
//! account's credentials or permissions voids its earlier tokens.

pub mod access_token;
pub mod account;
pub mod jwt;
pub mod level;
pub mod password;
pub mod users;
pub mod verified;

pub use account::{AccessToken, Account, DatabaseGrants, ANY, NEVER_EXPIRES};
pub use jwt::{secret_sha256, unix_now_secs, Claims, TokenKeys, TOKEN_ISSUER};
pub use level::Level;
pub use users::{check_name, AccountChange, ExtraChange, NewUser, Users, ROOT_USER};
