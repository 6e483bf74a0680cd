//! Which tenant a `/locks` request acts for: decided right after routing, before anything else
//! about the request is looked at.

use actix_web::HttpRequest;
use lock_domain::Tenant;

use crate::problem::ProblemKind;
use crate::ApiState;

/// The request's tenant, when its key is an admin key of it. Without API keys every caller may
/// do anything (as anyone who knows an owner may release its locks), so every caller is an admin
/// of the default tenant.
///
/// # Errors
/// [`ProblemKind::Unauthorized`] as [`tenant_of`]; [`ProblemKind::AdminRequired`] for a valid key
/// that is not an admin key (logged, without the key).
pub(crate) fn admin_of(req: &HttpRequest, state: &ApiState) -> Result<Tenant, ProblemKind> {
    let Some(keys) = &state.settings.api_keys else {
        return Ok(Tenant::default_tenant());
    };
    let tenant = tenant_of(req, state)?;
    match keys.caller_of(req) {
        Some(caller) if caller.admin => Ok(caller.tenant),
        _ => {
            tracing::warn!(
                target: "lockd::audit",
                event = "admin_required",
                tenant = %tenant,
                method = %req.method(),
                path = %req.path(),
                peer = ?req.peer_addr(),
                "an admin operation with a key that is not an admin key"
            );
            Err(ProblemKind::AdminRequired)
        }
    }
}

/// The request's tenant: the default tenant without API keys, else the tenant of the bearer key.
///
/// # Errors
/// [`ProblemKind::Unauthorized`] when keys are configured and the request presents none that is
/// valid. The attempt is logged without the key.
pub(crate) fn tenant_of(req: &HttpRequest, state: &ApiState) -> Result<Tenant, ProblemKind> {
    let Some(keys) = &state.settings.api_keys else {
        return Ok(Tenant::default_tenant());
    };
    keys.tenant_of(req).ok_or_else(|| {
        tracing::warn!(
            target: "lockd::audit",
            event = "unauthorized",
            method = %req.method(),
            path = %req.path(),
            peer = ?req.peer_addr(),
            "request without a valid API key"
        );
        ProblemKind::Unauthorized
    })
}
