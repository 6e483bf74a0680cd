//! The opaque page cursor of `GET /locks`: where the next page starts.
//!
//! A cursor is the base64url text (no padding) of a version byte followed by the UTF-8 bytes of
//! the last resource name of the page. Clients must not build or read cursors; the version byte
//! lets the encoding change later without misreading an old cursor as a name.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use lock_domain::ResourceName;

/// The only cursor encoding so far.
const VERSION: u8 = 1;

/// Encodes the cursor that resumes after `last`.
pub(crate) fn encode(last: &ResourceName) -> String {
    let mut bytes = Vec::with_capacity(1 + last.as_str().len());
    bytes.push(VERSION);
    bytes.extend_from_slice(last.as_str().as_bytes());
    URL_SAFE_NO_PAD.encode(bytes)
}

/// Why a cursor was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(crate) enum CursorError {
    #[error("is not a cursor this server issued")]
    Malformed,
}

/// Decodes a cursor back to the name the next page starts after.
///
/// # Errors
/// [`CursorError::Malformed`] for anything [`encode`] cannot have produced: not base64url, an
/// unknown version, or not a valid resource name.
pub(crate) fn decode(cursor: &str) -> Result<ResourceName, CursorError> {
    let bytes = URL_SAFE_NO_PAD
        .decode(cursor)
        .map_err(|_| CursorError::Malformed)?;
    let Some((&VERSION, name)) = bytes.split_first() else {
        return Err(CursorError::Malformed);
    };
    let name = std::str::from_utf8(name).map_err(|_| CursorError::Malformed)?;
    ResourceName::parse(name).map_err(|_| CursorError::Malformed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        for raw in [
            "a",
            "payment:42",
            "日本語",
            "100%_\\",
            "a/b+c d",
            &"€".repeat(85),
        ] {
            let name = ResourceName::parse(raw).unwrap();
            let cursor = encode(&name);
            assert!(cursor
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'));
            assert_eq!(decode(&cursor), Ok(name));
        }
    }

    #[test]
    fn refuses_what_it_did_not_issue() {
        let v2 = URL_SAFE_NO_PAD.encode([2, b'a']);
        let empty_name = URL_SAFE_NO_PAD.encode([VERSION]);
        let bad_utf8 = URL_SAFE_NO_PAD.encode([VERSION, 0xff]);
        let control = URL_SAFE_NO_PAD.encode([VERSION, b'a', 0]);
        let padded = format!("{}=", URL_SAFE_NO_PAD.encode([VERSION, b'a', b'b']));
        let too_long = URL_SAFE_NO_PAD.encode([&[VERSION][..], &[b'r'; 256]].concat());
        for bad in [
            "",
            "!",
            "a",
            "AQ==",
            "AWE=",
            "not base64",
            &v2,
            &empty_name,
            &bad_utf8,
            &control,
            &padded,
            &too_long,
        ] {
            assert_eq!(decode(bad), Err(CursorError::Malformed), "{bad:?}");
        }
    }
}
