//! API keys: who may touch which tenant's locks.
//!
//! The keys file holds lines of `<tenant> <hex sha256 of the key>`, optionally followed by
//! `admin` for a key that may also force-release its tenant's locks; blank lines and `#`
//! comments are ignored, and several lines may give one tenant several keys. Only digests are kept: a raw
//! key is hashed on arrival, compared with every digest in constant time, and never stored or
//! logged.

use std::sync::{Arc, PoisonError, RwLock};

use actix_web::http::header::{self, HeaderValue};
use actix_web::HttpRequest;
use lock_domain::Tenant;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// The configured keys: for each, its tenant, the SHA-256 digest of the key, and whether it is
/// an admin key. [`Self::replace`] swaps them all at once (a reload): a request is checked
/// against either the old set or the new one, never a mix.
pub struct ApiKeys {
    entries: RwLock<Arc<Vec<KeyEntry>>>,
}

type KeyEntry = (Tenant, [u8; 32], bool);

/// Who a request's key says it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    pub tenant: Tenant,
    /// Whether the key is an admin key of the tenant (it acts within that tenant only).
    pub admin: bool,
}

impl std::fmt::Debug for ApiKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApiKeys")
            .field("keys", &self.entries().len())
            .finish()
    }
}

impl ApiKeys {
    /// Parses the contents of a keys file.
    ///
    /// # Errors
    /// [`KeysFileError`] naming the first bad line (1-based); a file without any key is an error
    /// too, since it would lock every client out.
    pub fn parse(text: &str) -> Result<Self, KeysFileError> {
        let mut entries = Vec::new();
        for (index, line) in text.lines().enumerate() {
            let line_number = index + 1;
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let mut fields = line.split_whitespace();
            let (Some(tenant), Some(digest), role, None) =
                (fields.next(), fields.next(), fields.next(), fields.next())
            else {
                return Err(KeysFileError::new(
                    line_number,
                    "expected `<tenant> <hex sha256 of the key>` or `<tenant> <hex sha256> admin`",
                ));
            };
            let admin = match role {
                None => false,
                Some("admin") => true,
                Some(other) => {
                    return Err(KeysFileError::new(
                        line_number,
                        &format!("the third column may only be `admin`, not {other:?}"),
                    ))
                }
            };
            let tenant = Tenant::parse(tenant)
                .map_err(|e| KeysFileError::new(line_number, &format!("tenant {tenant:?} {e}")))?;
            let digest = parse_digest(digest).ok_or_else(|| {
                KeysFileError::new(line_number, "the digest must be 64 hex digits (sha256)")
            })?;
            entries.push((tenant, digest, admin));
        }
        if entries.is_empty() {
            return Err(KeysFileError::new(0, "the file names no key"));
        }
        Ok(Self {
            entries: RwLock::new(Arc::new(entries)),
        })
    }

    /// Puts `other`'s keys in force in place of these, for every later request.
    pub fn replace(&self, other: ApiKeys) {
        let new = other.entries();
        *self.entries.write().unwrap_or_else(PoisonError::into_inner) = new;
    }

    /// How many keys are in force.
    pub fn len(&self) -> usize {
        self.entries().len()
    }

    /// Whether no key is in force (never, for a parsed file).
    pub fn is_empty(&self) -> bool {
        self.entries().is_empty()
    }

    fn entries(&self) -> Arc<Vec<KeyEntry>> {
        Arc::clone(&self.entries.read().unwrap_or_else(PoisonError::into_inner))
    }

    /// The tenant whose key the request presents as `Authorization: Bearer <key>`, if any.
    pub fn tenant_of(&self, req: &HttpRequest) -> Option<Tenant> {
        self.caller_of(req).map(|caller| caller.tenant)
    }

    /// Who the key the request presents as `Authorization: Bearer <key>` belongs to, if any.
    pub fn caller_of(&self, req: &HttpRequest) -> Option<Caller> {
        let key = bearer_key(req.headers().get(header::AUTHORIZATION)?)?;
        let digest: [u8; 32] = Sha256::digest(key).into();
        // Compare with every entry, without stopping at a match, so that timing tells nothing.
        let mut found = None;
        for (tenant, expected, admin) in self.entries().iter() {
            if bool::from(expected.ct_eq(&digest)) && found.is_none() {
                found = Some(Caller {
                    tenant: tenant.clone(),
                    admin: *admin,
                });
            }
        }
        found
    }
}

fn bearer_key(value: &HeaderValue) -> Option<&[u8]> {
    let value = value.as_bytes();
    let scheme = value.get(..7)?;
    if !scheme.eq_ignore_ascii_case(b"bearer ") {
        return None;
    }
    let key = value[7..].trim_ascii();
    (!key.is_empty()).then_some(key)
}

fn parse_digest(hex: &str) -> Option<[u8; 32]> {
    if hex.len() != 64 {
        return None;
    }
    let mut digest = [0u8; 32];
    for (i, byte) in digest.iter_mut().enumerate() {
        *byte = u8::from_str_radix(hex.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(digest)
}

/// The hex SHA-256 digest of a key, as a keys file line wants it (`lockd hash-key`).
pub fn hash_key(key: &str) -> String {
    Sha256::digest(key.trim().as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A keys file that cannot be used: `line` is 1-based, 0 for the file as a whole.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{reason}", if *.line == 0 { String::new() } else { format!("line {line}: ") })]
pub struct KeysFileError {
    pub line: usize,
    pub reason: String,
}

impl KeysFileError {
    fn new(line: usize, reason: &str) -> Self {
        Self {
            line,
            reason: reason.to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use actix_web::test::TestRequest;

    use super::*;

    const KEY_A: &str = "key-of-acme-0123456789";

    fn file() -> String {
        format!(
            "# tenants\n\nacme {}\n  globex {}  \nacme {}\n",
            hash_key(KEY_A),
            hash_key("globex-key"),
            hash_key("second-acme-key")
        )
    }

    fn tenant_for(keys: &ApiKeys, authorization: Option<&str>) -> Option<String> {
        let mut req = TestRequest::default();
        if let Some(value) = authorization {
            req = req.insert_header((header::AUTHORIZATION, value));
        }
        keys.tenant_of(&req.to_http_request())
            .map(|t| t.as_str().to_owned())
    }

    #[test]
    fn keys_map_to_their_tenants() {
        let keys = ApiKeys::parse(&file()).unwrap();
        assert_eq!(
            tenant_for(&keys, Some(&format!("Bearer {KEY_A}"))),
            Some("acme".into())
        );
        assert_eq!(
            tenant_for(&keys, Some(&format!("bearer   {KEY_A} "))),
            Some("acme".into())
        );
        assert_eq!(
            tenant_for(&keys, Some("Bearer second-acme-key")),
            Some("acme".into())
        );
        assert_eq!(
            tenant_for(&keys, Some("Bearer globex-key")),
            Some("globex".into())
        );
        for wrong in [
            None,
            Some("Bearer nope"),
            Some(&format!("Basic {KEY_A}")[..]),
            Some("Bearer "),
            Some(KEY_A),
        ] {
            assert_eq!(tenant_for(&keys, wrong), None, "{wrong:?}");
        }
    }

    #[test]
    fn the_digest_is_hex_sha256() {
        assert_eq!(
            hash_key("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn bad_files_name_the_line() {
        let cases = [
            ("acme\n", 1),
            ("# ok\nacme abc\n", 2),
            (&format!("acme {} extra\n", hash_key("k"))[..], 1),
            (&format!("acme {} Admin\n", hash_key("k"))[..], 1),
            (&format!("acme {} admin more\n", hash_key("k"))[..], 1),
            (&format!("\n\nbad/tenant {}\n", hash_key("k"))[..], 3),
            ("", 0),
            ("# only comments\n\n", 0),
        ];
        for (text, line) in cases {
            assert_eq!(ApiKeys::parse(text).unwrap_err().line, line, "{text:?}");
        }
    }

    #[test]
    fn an_admin_key_is_marked_in_the_third_column() {
        let text = format!(
            "acme {} admin\nacme {}\n",
            hash_key("boss"),
            hash_key("worker")
        );
        let keys = ApiKeys::parse(&text).unwrap();
        let caller = |key: &str| {
            let req = TestRequest::default()
                .insert_header((header::AUTHORIZATION, format!("Bearer {key}")))
                .to_http_request();
            keys.caller_of(&req)
        };
        let boss = caller("boss").unwrap();
        assert_eq!((boss.tenant.as_str(), boss.admin), ("acme", true));
        let worker = caller("worker").unwrap();
        assert_eq!((worker.tenant.as_str(), worker.admin), ("acme", false));
        assert_eq!(caller("nobody"), None);
    }

    #[test]
    fn a_replacement_takes_effect_for_the_next_check() {
        let keys = ApiKeys::parse(&file()).unwrap();
        let with = |key: &str| Some(format!("Bearer {key}"));
        keys.replace(ApiKeys::parse(&format!("initech {}\n", hash_key("new-key"))).unwrap());
        assert_eq!(keys.len(), 1);
        assert_eq!(tenant_for(&keys, with(KEY_A).as_deref()), None);
        assert_eq!(
            tenant_for(&keys, with("new-key").as_deref()),
            Some("initech".into())
        );
    }

    #[test]
    fn debug_shows_no_digest() {
        let keys = ApiKeys::parse(&file()).unwrap();
        assert_eq!(format!("{keys:?}"), "ApiKeys { keys: 3 }");
    }
}
