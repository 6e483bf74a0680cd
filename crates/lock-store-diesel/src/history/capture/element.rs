//! The JSON element of a record as SQLite's `json_array` writes it (`["tenant","kind","name",
//! "owner",token,"event",reason,shared]`): where its tenant, kind and name are, still escaped
//! (the escaped text is as unique as the text: `json_array` escapes the same text the same way),
//! and the text they stand for.

/// The raw (escaped, without quotes) tenant, kind and name of `element`, or `None` when it does
/// not start with three JSON strings.
pub(super) fn key(element: &str) -> Option<Key<'_>> {
    let rest = element.strip_prefix('[')?;
    let (tenant, rest) = string(rest)?;
    let (kind, rest) = string(rest.strip_prefix(',')?)?;
    let (name, rest) = string(rest.strip_prefix(',')?)?;
    rest.starts_with(',').then_some(Key { tenant, kind, name })
}

/// Where a record belongs, as written in its element (escaped).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) struct Key<'a> {
    pub(super) tenant: &'a str,
    pub(super) kind: &'a str,
    pub(super) name: &'a str,
}

/// The raw contents of the JSON string `text` starts with, and what follows it.
fn string(text: &str) -> Option<(&str, &str)> {
    let body = text.strip_prefix('"')?;
    let mut escaped = false;
    for (at, byte) in body.bytes().enumerate() {
        match byte {
            _ if escaped => escaped = false,
            b'\\' => escaped = true,
            b'"' => return Some((&body[..at], &body[at + 1..])),
            _ => {}
        }
    }
    None
}

/// The text the raw contents of a JSON string stand for, or `None` for an escape JSON has not.
pub(super) fn unescape(raw: &str) -> Option<String> {
    if !raw.contains('\\') {
        return Some(raw.to_owned());
    }
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next()? {
            '"' => out.push('"'),
            '\\' => out.push('\\'),
            '/' => out.push('/'),
            'b' => out.push('\u{8}'),
            'f' => out.push('\u{c}'),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            't' => out.push('\t'),
            'u' => {
                let high = hex4(&mut chars)?;
                let code = if (0xD800..0xDC00).contains(&high) {
                    if chars.next()? != '\\' || chars.next()? != 'u' {
                        return None;
                    }
                    let low = hex4(&mut chars)?;
                    0x10000 + ((high - 0xD800) << 10) + low.checked_sub(0xDC00)?
                } else {
                    high
                };
                out.push(char::from_u32(code)?);
            }
            _ => return None,
        }
    }
    Some(out)
}

fn hex4(chars: &mut std::str::Chars<'_>) -> Option<u32> {
    let digits: String = chars.by_ref().take(4).collect();
    if digits.len() != 4 {
        return None;
    }
    u32::from_str_radix(&digits, 16).ok()
}
