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
