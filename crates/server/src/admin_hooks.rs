//! What `quince serve` lends the API's admin endpoints (`quince_api::AdminHooks`): the log
//! control ([`crate::logging::LogSettings`]), the token secret files, and the options report
//! ([`crate::options_report`]).
//!
//! What it is: [`install`], called once the API is open, and [`SecretFiles`], which re-reads
//! `--server.jwt-secret-keyfile` or `--server.jwt-secret-folder` for `POST /_admin/server/jwt`.
//!
//! What it is not: the endpoints (crate `quince-api`) or the reading rules of the secret files
//! ([`crate::config::read_jwt_secrets`], shared with startup).
//!
//! Invariants: the files are read with the same rules as at startup, so a reload accepts
//! exactly what a restart would; without a keyfile or folder there is nothing to reload.

use std::path::PathBuf;
use std::sync::Arc;

use quince_api::{Api, SecretSource};

use crate::config::{read_jwt_secrets, ServeArgs};
use crate::logging::LogSettings;

/// The secret files named at startup.
pub struct SecretFiles {
    keyfile: Option<PathBuf>,
    folder: Option<PathBuf>,
}

impl SecretSource for SecretFiles {
    fn read(&self) -> Result<Option<Vec<Vec<u8>>>, String> {
        if self.keyfile.is_none() && self.folder.is_none() {
            return Ok(None);
        }
        read_jwt_secrets(self.keyfile.as_deref(), self.folder.as_deref()).map(Some)
    }
}

/// Installs the log control, the secret files and the options report in `api`.
pub fn install(api: &Api, args: &ServeArgs, log: Option<Arc<LogSettings>>) {
    let hooks = api.hooks();
    if let Some(log) = log {
        hooks.install_log(log);
    }
    hooks.install_secrets(Arc::new(SecretFiles {
        keyfile: args.jwt_secret_keyfile.clone(),
        folder: args.jwt_secret_folder.clone(),
    }));
    hooks.install_options(crate::options_report::report(std::env::args_os().collect()));
}
