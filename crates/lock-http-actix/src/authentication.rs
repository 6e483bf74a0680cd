//! Which tenant a `/locks` request acts for: decided right after routing, before anything else
//! about the request is looked at.

use actix_web::HttpRequest;
use lock_domain::Tenant;

use crate::problem::ProblemKind;
use crate::ApiState;

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
