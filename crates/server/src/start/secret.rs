//! The cluster's JWT secret: the file every quince server is given, and the superuser token
//! the starter signs with it to ask the servers whether they are up.
//!
//! What it is: [`ensure_secret_file`] (generates `DATA-DIR/jwt-secret`, 64 random hex
//! characters, mode 0600, on the first start; keeps it afterwards), [`read_secret`] and
//! [`superuser_token`] (HS256 with `iss`, `server_id`, `iat` and `exp`, as ArangoDB's tools
//! mint them).
//!
//! What it is not: token verification (the servers do that) or user tokens.
//!
//! Invariants: an existing secret file is never rewritten; tokens live one hour.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use base64::Engine;
use hmac::{Hmac, Mac};
use rand::RngCore;
use sha2::Sha256;

/// The generated secret file's name in the data directory.
pub const SECRET_FILE: &str = "jwt-secret";

/// How long a token of the starter is good for, in seconds.
const TOKEN_LIFETIME_S: u64 = 3600;

/// Creates `path` with a fresh random secret unless it exists.
pub fn ensure_secret_file(path: &Path) -> Result<(), String> {
    if path.exists() {
        return Ok(());
    }
    let mut bytes = [0u8; 32];
    rand::thread_rng().fill_bytes(&mut bytes);
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
    file.write_all(hex.as_bytes())
        .and_then(|()| file.sync_all())
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// The secret as quince serve reads it: the file without trailing line ends.
pub fn read_secret(path: &Path) -> Result<Vec<u8>, String> {
    crate::config::read_jwt_secret(path)
}

/// A superuser token signed with `secret`, issued at `now` (seconds since the epoch).
pub fn superuser_token(secret: &[u8], now: u64) -> String {
    let encode = |bytes: &[u8]| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes);
    let header = encode(br#"{"alg":"HS256","typ":"JWT"}"#);
    let claims = serde_json::json!({
        "iss": "arangodb",
        "server_id": "quince-start",
        "iat": now,
        "exp": now + TOKEN_LIFETIME_S,
    });
    let payload = encode(claims.to_string().as_bytes());
    let signed = format!("{header}.{payload}");
    let mut mac = Hmac::<Sha256>::new_from_slice(secret).expect("HMAC takes keys of any length");
    mac.update(signed.as_bytes());
    let signature = encode(&mac.finalize().into_bytes());
    format!("{signed}.{signature}")
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    #[test]
    fn the_secret_file_is_made_once_and_private() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(SECRET_FILE);
        ensure_secret_file(&path).unwrap();
        let first = read_secret(&path).unwrap();
        assert_eq!(first.len(), 64);
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
        ensure_secret_file(&path).unwrap();
        assert_eq!(read_secret(&path).unwrap(), first);
    }

    #[test]
    fn the_token_verifies_as_a_superuser_token() {
        let keys = quince_auth_keys(b"secret");
        let token = superuser_token(b"secret", quince_now());
        let claims = keys.verify(&token).expect("the token verifies");
        assert!(matches!(claims, quince_auth::Claims::Superuser));
        assert!(quince_auth_keys(b"other").verify(&token).is_none());
    }

    fn quince_auth_keys(secret: &[u8]) -> quince_auth::TokenKeys {
        quince_auth::TokenKeys::new(&[secret.to_vec()], 3600)
    }

    fn quince_now() -> u64 {
        quince_auth::unix_now_secs()
    }
}
