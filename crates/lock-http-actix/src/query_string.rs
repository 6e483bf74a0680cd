//! Form-encoded query strings (`application/x-www-form-urlencoded`), as the listing's parameters
//! and a release's `?owner=` are sent.

use percent_encoding::percent_decode;

/// A form-encoded query value, decoded (`+` is a space).
pub(crate) fn form_decode(raw: &str) -> Result<String, std::str::Utf8Error> {
    let spaced = raw.replace('+', " ");
    percent_decode(spaced.as_bytes())
        .decode_utf8()
        .map(|s| s.into_owned())
}

/// The parameters of `query`, decoded, in order: each of `allowed` at most once. Every other
/// parameter, every repeated one and every one that is not UTF-8 once decoded is an error in
/// its place instead (`unknown_parameter`, `conflict`, `invalid_utf8`): a misspelt parameter
/// that was silently ignored would be a worse answer than an error.
pub(crate) fn parameters(
    query: &str,
    allowed: &[&str],
) -> Vec<Result<(String, String), crate::problem::FieldError>> {
    use crate::problem::FieldError;
    let mut seen: Vec<String> = Vec::new();
    let mut found = Vec::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (raw_key, raw_value) = pair.split_once('=').unwrap_or((pair, ""));
        let Ok(key) = form_decode(raw_key) else {
            found.push(Err(FieldError::new(
                "query",
                "invalid_utf8",
                "a parameter name is not valid UTF-8 once percent-decoded",
            )));
            continue;
        };
        if !allowed.contains(&key.as_str()) {
            found.push(Err(FieldError::new(
                &key,
                "unknown_parameter",
                format!(
                    "unknown parameter {key:?}: the parameters are {}",
                    allowed.join(", ")
                ),
            )));
            continue;
        }
        if seen.contains(&key) {
            found.push(Err(FieldError::new(
                &key,
                "conflict",
                format!("{key} is given more than once"),
            )));
            continue;
        }
        seen.push(key.clone());
        found.push(match form_decode(raw_value) {
            Ok(value) => Ok((key, value)),
            Err(_) => Err(FieldError::new(
                &key,
                "invalid_utf8",
                format!("{key} must be valid UTF-8 once percent-decoded"),
            )),
        });
    }
    found
}

/// Every parameter of `query` but `allowed`, as an error: a `reason` (which belongs with
/// `force=true`) is `unexpected`, saying `reason_hint`; any other name is an
/// `unknown_parameter`, saying what the request takes (`takes`). Each error once.
pub(crate) fn stray_parameters(
    query: &str,
    allowed: &[&str],
    reason_hint: &str,
    takes: &str,
) -> Vec<crate::problem::FieldError> {
    use crate::problem::FieldError;
    let mut errors = Vec::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let raw_key = pair.split_once('=').map_or(pair, |(key, _)| key);
        let error = match form_decode(raw_key).as_deref() {
            Ok(key) if allowed.contains(&key) => continue,
            Ok("reason") => FieldError::new("reason", "unexpected", reason_hint),
            Ok(key) => FieldError::new(
                key,
                "unknown_parameter",
                format!("unknown parameter {key:?}: {takes}"),
            ),
            Err(_) => FieldError::new(
                "query",
                "invalid_utf8",
                "a parameter name is not valid UTF-8 once percent-decoded",
            ),
        };
        if !errors.contains(&error) {
            errors.push(error);
        }
    }
    errors
}
