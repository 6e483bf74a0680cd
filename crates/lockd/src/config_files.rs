//! The operator's files: the API keys file and the tenant limits file, read at start-up (a bad
//! file stops the start, naming its line) and again on every SIGHUP (a bad file then keeps the
//! configuration in force, and the log says why).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use lock_http_actix::ApiKeys;
use lock_service::{LimitsTable, LockService};

use crate::cli::ServeArgs;
use crate::startup_error::StartupError;

/// The files given on the command line, and what was read from them.
pub(crate) struct ConfigFiles {
    api_keys: Option<(PathBuf, Arc<ApiKeys>)>,
    tenant_limits: Option<PathBuf>,
}

impl ConfigFiles {
    /// Reads the files `args` names.
    ///
    /// # Errors
    /// [`StartupError::ApiKeys`] or [`StartupError::TenantLimits`] for a file that cannot be
    /// read or parsed.
    pub(crate) fn load(args: &ServeArgs) -> Result<(Self, Option<LimitsTable>), StartupError> {
        let api_keys = match &args.api_keys_file {
            None => None,
            Some(path) => {
                let keys = read_api_keys(path).map_err(|reason| StartupError::ApiKeys {
                    path: path.display().to_string(),
                    reason,
                })?;
                tracing::info!(path = %path.display(), keys = keys.len(), "API keys loaded; /locks requests need a bearer key");
                Some((path.clone(), Arc::new(keys)))
            }
        };
        let limits = match &args.tenant_limits_file {
            None => None,
            Some(path) => {
                let table = read_limits(path).map_err(|reason| StartupError::TenantLimits {
                    path: path.display().to_string(),
                    reason,
                })?;
                tracing::info!(path = %path.display(), tenants = table.tenants().len(), "tenant limits loaded");
                Some(table)
            }
        };
        let files = Self {
            api_keys,
            tenant_limits: args.tenant_limits_file.clone(),
        };
        Ok((files, limits))
    }

    /// The keys in force, shared with the API (which a reload updates in place).
    pub(crate) fn api_keys(&self) -> Option<Arc<ApiKeys>> {
        self.api_keys.as_ref().map(|(_, keys)| Arc::clone(keys))
    }

    /// Reads every file again and puts each one that parses in force; one that does not keeps
    /// the configuration it would have replaced, and the log says why.
    pub(crate) fn reload(&self, service: &LockService) {
        if let Some((path, keys)) = &self.api_keys {
            match read_api_keys(path) {
                Ok(new) => {
                    let count = new.len();
                    keys.replace(new);
                    tracing::info!(path = %path.display(), keys = count, "API keys reloaded");
                }
                Err(reason) => {
                    tracing::error!(path = %path.display(), %reason, "API keys file not reloaded; the keys in force are kept");
                }
            }
        }
        if let Some(path) = &self.tenant_limits {
            match read_limits(path) {
                Ok(table) => {
                    let tenants = table.tenants().len();
                    service.tenants().set_limits(table);
                    tracing::info!(path = %path.display(), tenants, "tenant limits reloaded");
                }
                Err(reason) => {
                    tracing::error!(path = %path.display(), %reason, "tenant limits file not reloaded; the limits in force are kept");
                }
            }
        }
    }

    /// Reloads on every SIGHUP, forever. Run it as a task; abort it to stop.
    pub(crate) async fn reload_on_hangup(self, service: LockService) {
        use tokio::signal::unix::{signal, SignalKind};
        let Ok(mut hangups) = signal(SignalKind::hangup()) else {
            tracing::warn!("cannot watch for SIGHUP; the keys and limits files are not reloaded");
            return;
        };
        while hangups.recv().await.is_some() {
            self.reload(&service);
        }
    }
}

fn read_api_keys(path: &Path) -> Result<ApiKeys, String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    ApiKeys::parse(&text).map_err(|e| e.to_string())
}

fn read_limits(path: &Path) -> Result<LimitsTable, String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    LimitsTable::parse(&text).map_err(|e| e.to_string())
}
