//! [`ApiPolicy`]: who may call an API that reveals details of the deployment, as arangod's
//! `--server.options-api`, `--server.support-info-api`, `--log.api-enabled` and
//! `--log.recording-api-enabled` say it.
//!
//! What it is: the four policies and the check of a caller against one.
//!
//! What it is not: the database rule (both APIs answer only in `_system`; the handlers check
//! that first).
//!
//! Invariants: `disabled` refuses everybody, the superuser included; `jwt` lets only the
//! superuser (a superuser JWT, or authentication off) through; `admin` administrators (`rw` on
//! `_system`) and the superuser; `public` anyone who reached `_system`. Refusals are 403/11.

use quince_errors::{ArangoError, Result, FORBIDDEN};

use crate::permission::Caller;

/// Who may call an API.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ApiPolicy {
    /// Nobody.
    Disabled,
    /// The superuser only.
    Jwt,
    /// Administrators and the superuser.
    Admin,
    /// Anyone with access to `_system`.
    Public,
}

impl ApiPolicy {
    /// `disabled`, `jwt`, `admin` or `public`.
    pub fn parse(text: &str) -> std::result::Result<ApiPolicy, String> {
        match text.trim() {
            "disabled" => Ok(ApiPolicy::Disabled),
            "jwt" => Ok(ApiPolicy::Jwt),
            "admin" => Ok(ApiPolicy::Admin),
            "public" => Ok(ApiPolicy::Public),
            other => Err(format!(
                "'{other}' is not one of disabled, jwt, admin, public"
            )),
        }
    }

    /// arangod's switch form (`--log.api-enabled`, `--log.recording-api-enabled`): `true`
    /// (administrators), `jwt` (the superuser only) or `false` (nobody).
    pub fn parse_switch(text: &str) -> std::result::Result<ApiPolicy, String> {
        match text.trim().to_ascii_lowercase().as_str() {
            "true" | "on" | "yes" | "1" => Ok(ApiPolicy::Admin),
            "jwt" => Ok(ApiPolicy::Jwt),
            "false" | "off" | "no" | "0" => Ok(ApiPolicy::Disabled),
            other => Err(format!("'{other}' is not one of true, jwt, false")),
        }
    }

    /// Checks `caller` against the policy (403/11 when refused).
    pub fn check(self, caller: &Caller) -> Result<()> {
        let allowed = match self {
            ApiPolicy::Disabled => false,
            ApiPolicy::Jwt => caller.is_superuser(),
            ApiPolicy::Admin => caller.is_admin(),
            ApiPolicy::Public => true,
        };
        if allowed {
            Ok(())
        } else {
            Err(ArangoError::with_message(
                FORBIDDEN,
                match self {
                    ApiPolicy::Disabled => "this API is disabled",
                    _ => "not allowed to use this API",
                },
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policies_parse_and_gate() {
        assert_eq!(ApiPolicy::parse("jwt"), Ok(ApiPolicy::Jwt));
        assert!(ApiPolicy::parse("root").is_err());
        assert_eq!(ApiPolicy::parse_switch("true"), Ok(ApiPolicy::Admin));
        assert_eq!(ApiPolicy::parse_switch("jwt"), Ok(ApiPolicy::Jwt));
        assert_eq!(ApiPolicy::parse_switch("false"), Ok(ApiPolicy::Disabled));
        assert!(ApiPolicy::parse_switch("maybe").is_err());
        let superuser = Caller::superuser();
        let nobody = Caller::nobody();
        assert!(ApiPolicy::Disabled.check(&superuser).is_err());
        assert!(ApiPolicy::Jwt.check(&superuser).is_ok());
        assert!(ApiPolicy::Admin.check(&superuser).is_ok());
        assert!(ApiPolicy::Admin.check(&nobody).is_err());
        assert!(ApiPolicy::Public.check(&nobody).is_ok());
    }
}
