//! `locks` and `resources`: the lists of a multi-lock acquire (`[{"resource", "mode"?}, …]`) and
//! of a release of many (`["name", …]`), 1 to 64 distinct resource names each.

use lock_domain::{LockMode, ResourceName, MAX_LOCKS_AT_ONCE};
use serde::Deserialize;
use serde_json::value::RawValue;
use utoipa::openapi::{ArrayBuilder, ObjectBuilder, Type};

use super::mode::{mode_field, mode_schema};
use super::pattern;
use super::resource::text_named;
use crate::problem::FieldError;

/// One entry of `locks`, still raw. Unknown members are ignored; a member given as `null` is
/// kept (as the raw text `null`), so that its parser refuses it as every field's does.
#[derive(Deserialize)]
struct Entry<'a> {
    #[serde(borrow, default, deserialize_with = "present")]
    resource: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    mode: Option<&'a RawValue>,
}

fn present<'de, D>(deserializer: D) -> Result<Option<&'de RawValue>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    <&RawValue>::deserialize(deserializer).map(Some)
}

fn resource_schema() -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .min_length(Some(1))
        .max_length(Some(ResourceName::MAX_CHARS))
        .pattern(Some(pattern::resource_name()))
}

/// The schema of `locks`.
pub(crate) fn locks_schema() -> utoipa::openapi::Array {
    ArrayBuilder::new()
        .items(
            ObjectBuilder::new()
                .schema_type(Type::Object)
                .property(
                    "resource",
                    resource_schema().description(Some("A lock to take (resource name rules).")),
                )
                .required("resource")
                .property("mode", mode_schema()),
        )
        .min_items(Some(1))
        .max_items(Some(MAX_LOCKS_AT_ONCE))
        .unique_items(true)
        .description(Some(format!(
            "1 to {MAX_LOCKS_AT_ONCE} locks, each resource named once (two entries naming one \
             resource are a 422 `duplicate` even in different modes), each in its mode."
        )))
        .build()
}

/// The schema of `resources`.
pub(crate) fn resources_schema() -> utoipa::openapi::Array {
    ArrayBuilder::new()
        .items(resource_schema())
        .min_items(Some(1))
        .max_items(Some(MAX_LOCKS_AT_ONCE))
        .unique_items(true)
        .description(Some(format!(
            "1 to {MAX_LOCKS_AT_ONCE} resource names, each named once."
        )))
        .build()
}

fn list_of<'a>(field: &str, raw: Option<&'a RawValue>) -> Result<Vec<&'a RawValue>, FieldError> {
    let raw = raw.filter(|raw| raw.get() != "null").ok_or_else(|| {
        FieldError::new(
            field,
            "required",
            format!("{field} is required: a list of 1 to {MAX_LOCKS_AT_ONCE}"),
        )
    })?;
    let items = serde_json::from_str::<Vec<&RawValue>>(raw.get()).map_err(|_| {
        FieldError::new(
            field,
            "invalid_type",
            format!("{field} must be a JSON array"),
        )
    })?;
    if items.is_empty() || items.len() > MAX_LOCKS_AT_ONCE {
        return Err(FieldError::new(
            field,
            "out_of_range",
            format!(
                "{field} must name 1 to {MAX_LOCKS_AT_ONCE} resources, got {}",
                items.len()
            ),
        ));
    }
    Ok(items)
}

fn name_at(field: &str, raw: Option<&RawValue>) -> Result<ResourceName, FieldError> {
    let raw =
        raw.ok_or_else(|| FieldError::new(field, "required", format!("{field} is required")))?;
    let text = serde_json::from_str::<String>(raw.get()).map_err(|_| {
        FieldError::new(
            field,
            "invalid_type",
            format!("{field} must be a JSON string"),
        )
    })?;
    text_named(field, text)
}

/// The names must be distinct: the first repeated one is reported on `field`.
fn distinct(field: &str, names: &[&ResourceName]) -> Result<(), FieldError> {
    let mut sorted: Vec<&str> = names.iter().map(|name| name.as_str()).collect();
    sorted.sort_unstable();
    match sorted.windows(2).find(|pair| pair[0] == pair[1]) {
        Some(pair) => Err(FieldError::new(
            field,
            "duplicate",
            format!("{field} names resource {:?} more than once", pair[0]),
        )),
        None => Ok(()),
    }
}

/// The `locks` field of a multi-lock acquire.
///
/// # Errors
/// Every invalid entry: `locks` (`required`, `invalid_type`, `out_of_range`, `duplicate`),
/// `locks[i]` (`invalid_type`), `locks[i].resource` (the resource rules), `locks[i].mode`.
pub(crate) fn locks_field(
    raw: Option<&RawValue>,
) -> Result<Vec<(ResourceName, LockMode)>, Vec<FieldError>> {
    let items = list_of("locks", raw).map_err(|e| vec![e])?;
    let mut errors = Vec::new();
    let mut locks = Vec::with_capacity(items.len());
    for (index, item) in items.into_iter().enumerate() {
        let Ok(entry) = serde_json::from_str::<Entry>(item.get()) else {
            errors.push(FieldError::new(
                &format!("locks[{index}]"),
                "invalid_type",
                format!("locks[{index}] must be an object {{\"resource\", \"mode\"?}}"),
            ));
            continue;
        };
        let name = name_at(&format!("locks[{index}].resource"), entry.resource);
        let mode = mode_field(entry.mode).map_err(|mut e| {
            e.field = format!("locks[{index}].mode");
            e
        });
        match (name, mode) {
            (Ok(name), Ok(mode)) => locks.push((name, mode)),
            (name, mode) => errors.extend(name.err().into_iter().chain(mode.err())),
        }
    }
    if errors.is_empty() {
        let names: Vec<&ResourceName> = locks.iter().map(|(name, _)| name).collect();
        distinct("locks", &names).map_err(|e| vec![e])?;
        Ok(locks)
    } else {
        Err(errors)
    }
}

/// The `resources` field of a release of many.
///
/// # Errors
/// `resources` (`required`, `invalid_type`, `out_of_range`, `duplicate`) and `resources[i]`.
pub(crate) fn resources_field(
    raw: Option<&RawValue>,
) -> Result<Vec<ResourceName>, Vec<FieldError>> {
    let items = list_of("resources", raw).map_err(|e| vec![e])?;
    let mut errors = Vec::new();
    let mut names = Vec::with_capacity(items.len());
    for (index, item) in items.into_iter().enumerate() {
        match name_at(&format!("resources[{index}]"), Some(item)) {
            Ok(name) => names.push(name),
            Err(error) => errors.push(error),
        }
    }
    if errors.is_empty() {
        let refs: Vec<&ResourceName> = names.iter().collect();
        distinct("resources", &refs).map_err(|e| vec![e])?;
        Ok(names)
    } else {
        Err(errors)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn locks(json: &str) -> Result<usize, Vec<(String, String)>> {
        let raw = RawValue::from_string(json.to_owned()).unwrap();
        locks_field(Some(&raw))
            .map(|locks| locks.len())
            .map_err(|errors| errors.into_iter().map(|e| (e.field, e.code)).collect())
    }

    #[test]
    fn locks_table() {
        let err = |field: &str, code: &str| Err(vec![(field.to_owned(), code.to_owned())]);
        assert_eq!(
            locks(r#"[{"resource": "a"}, {"resource": "b", "mode": "shared"}]"#),
            Ok(2)
        );
        assert_eq!(locks("[]"), err("locks", "out_of_range"));
        assert_eq!(locks("{}"), err("locks", "invalid_type"));
        assert_eq!(locks("null"), err("locks", "required"));
        assert_eq!(
            locks(r#"[{"resource": "a"}, {"resource": "a"}]"#),
            err("locks", "duplicate")
        );
        assert_eq!(
            locks(r#"[{"resource": ""}]"#),
            err("locks[0].resource", "empty")
        );
        assert_eq!(
            locks(r#"[{"mode": "shared"}]"#),
            err("locks[0].resource", "required")
        );
        assert_eq!(
            locks(r#"[{"resource": 7}]"#),
            err("locks[0].resource", "invalid_type")
        );
        assert_eq!(locks(r#"["a"]"#), err("locks[0]", "invalid_type"));
        assert_eq!(
            locks(r#"[{"resource": "a", "mode": "read"}]"#),
            err("locks[0].mode", "invalid_value")
        );
        assert_eq!(
            locks(r#"[{"resource": "a", "mode": null}]"#),
            err("locks[0].mode", "invalid_type")
        );
        assert_eq!(
            locks(r#"[{"resource": null}]"#),
            err("locks[0].resource", "invalid_type")
        );
        let many: Vec<String> = (0..65)
            .map(|i| format!(r#"{{"resource": "r{i}"}}"#))
            .collect();
        assert_eq!(
            locks(&format!("[{}]", many.join(","))),
            err("locks", "out_of_range")
        );
        assert_eq!(locks(&format!("[{}]", many[..64].join(","))), Ok(64));
    }

    #[test]
    fn resources_table() {
        let parse = |json: &str| {
            let raw = RawValue::from_string(json.to_owned()).unwrap();
            resources_field(Some(&raw))
                .map(|names| names.len())
                .map_err(|e| e[0].code.clone())
        };
        assert_eq!(parse(r#"["a", "b"]"#), Ok(2));
        assert_eq!(parse(r#"["a", "a"]"#), Err("duplicate".into()));
        assert_eq!(parse(r#"[1]"#), Err("invalid_type".into()));
        assert_eq!(parse("[]"), Err("out_of_range".into()));
    }
}
