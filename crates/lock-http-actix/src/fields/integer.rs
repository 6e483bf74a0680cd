//! Integers as JSON Schema counts them: a JSON number is an integer when its value has no
//! fractional part, however it is written (`237`, `237.0`, `2.37e2`). The fields `ttl_seconds`,
//! `wait_seconds` and `limit` read their numbers here, so they accept exactly the values their
//! `"type": "integer"` schemas allow, and never round.

/// What a JSON number's text denotes, read exactly (decimal digits, no floating point).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum JsonInteger {
    /// An integer that fits an `i64`.
    Value(i64),
    /// An integer beyond the range of an `i64` (`1e400`, `-99999999999999999999`).
    Huge,
    /// Not an integer: a fraction (`60.5`), or not a JSON number at all (`"60"`, `true`, `6.`).
    NotInteger,
}

/// Reads `text` as one JSON number (RFC 8259's grammar, nothing around it).
pub(crate) fn read(text: &str) -> JsonInteger {
    let Some(number) = parse(text) else {
        return JsonInteger::NotInteger;
    };
    let digits = number.digits.trim_start_matches('0');
    if digits.is_empty() {
        return JsonInteger::Value(0);
    }
    // The value is digits × 10^scale; trailing zeros move into the scale.
    let significant = digits.trim_end_matches('0');
    let scale = number
        .exponent
        .saturating_sub(number.fraction_digits)
        .saturating_add((digits.len() - significant.len()) as i64);
    if scale < 0 {
        return JsonInteger::NotInteger;
    }
    // An i64 has at most 19 digits.
    if significant.len() as i64 + scale > 19 {
        return JsonInteger::Huge;
    }
    let mut magnitude: i128 = significant.parse().unwrap_or(i128::MAX);
    for _ in 0..scale {
        magnitude *= 10;
    }
    let value = if number.negative {
        -magnitude
    } else {
        magnitude
    };
    i64::try_from(value).map_or(JsonInteger::Huge, JsonInteger::Value)
}

/// A JSON number taken apart: sign, all its digits (integer then fraction part), how many of them
/// are the fraction, and the exponent (saturated: no exponent changes the verdict past i64).
struct Number {
    negative: bool,
    digits: String,
    fraction_digits: i64,
    exponent: i64,
}

fn parse(text: &str) -> Option<Number> {
    let (negative, rest) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (mantissa, exponent) = match rest.find(['e', 'E']) {
        Some(at) => (&rest[..at], Some(&rest[at + 1..])),
        None => (rest, None),
    };
    let (integer, fraction) = match mantissa.split_once('.') {
        Some((integer, fraction)) => (integer, Some(fraction)),
        None => (mantissa, None),
    };
    let all_digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !all_digits(integer) || (integer.len() > 1 && integer.starts_with('0')) {
        return None;
    }
    if fraction.is_some_and(|f| !all_digits(f)) {
        return None;
    }
    let exponent = match exponent {
        None => 0,
        Some(e) => {
            let (sign, digits) = match e.as_bytes().first() {
                Some(b'-') => (-1, &e[1..]),
                Some(b'+') => (1, &e[1..]),
                _ => (1, e),
            };
            if !all_digits(digits) {
                return None;
            }
            // Saturate: 20 digits of exponent already put any mantissa of a 16 KiB body out of range.
            let significant = digits.trim_start_matches('0');
            // An exponent of only zeros (`3e0`, `3e00`) is 0, not a number too large to read.
            let magnitude = if significant.is_empty() {
                0
            } else {
                significant
                    .parse::<i64>()
                    .unwrap_or(i64::MAX / 2)
                    .min(i64::MAX / 2)
            };
            sign * magnitude
        }
    };
    let fraction = fraction.unwrap_or("");
    Some(Number {
        negative,
        digits: format!("{integer}{fraction}"),
        fraction_digits: fraction.len() as i64,
        exponent,
    })
}

#[cfg(test)]
mod tests {
    use super::JsonInteger::{Huge, NotInteger, Value};
    use super::*;

    #[test]
    fn reads_integers_as_json_schema_counts_them() {
        let cases: &[(&str, JsonInteger)] = &[
            ("0", Value(0)),
            ("-0", Value(0)),
            ("237", Value(237)),
            ("-5", Value(-5)),
            ("237.0", Value(237)),
            ("237.000", Value(237)),
            ("2.37e2", Value(237)),
            ("2370e-1", Value(237)),
            ("23700E-2", Value(237)),
            ("6e1", Value(60)),
            ("3e0", Value(3)),
            ("3E+00", Value(3)),
            ("30e-0", Value(30)),
            ("6E+1", Value(60)),
            ("0.0", Value(0)),
            ("-0.0e-7", Value(0)),
            ("0e400", Value(0)),
            ("9223372036854775807", Value(i64::MAX)),
            ("-9223372036854775808", Value(i64::MIN)),
            ("9223372036854775808", Huge),
            ("-9223372036854775809", Huge),
            ("99999999999999999999999", Huge),
            ("1e19", Huge),
            ("1e18", Value(1_000_000_000_000_000_000)),
            ("1e400", Huge),
            ("-1e400", Huge),
            ("1e99999999999999999999999", Huge),
            ("60.5", NotInteger),
            ("237.01", NotInteger),
            ("1e-1", NotInteger),
            ("1e-400", NotInteger),
            ("1e-99999999999999999999999", NotInteger),
            ("0.5e1", Value(5)),
            ("0.05e1", NotInteger),
            ("", NotInteger),
            ("-", NotInteger),
            ("+5", NotInteger),
            (" 5", NotInteger),
            ("5 ", NotInteger),
            ("05", NotInteger),
            ("5.", NotInteger),
            (".5", NotInteger),
            ("5e", NotInteger),
            ("5e+", NotInteger),
            ("0x10", NotInteger),
            ("\"60\"", NotInteger),
            ("true", NotInteger),
            ("null", NotInteger),
            ("[60]", NotInteger),
            ("NaN", NotInteger),
            ("Infinity", NotInteger),
            ("٣", NotInteger),
        ];
        for (text, expected) in cases {
            assert_eq!(read(text), *expected, "{text:?}");
        }
    }

    /// Every i64 written plainly, and as a float with a zero fraction, reads back as itself.
    #[test]
    fn round_trips() {
        for value in [1, 59, 86_400, i64::from(u32::MAX), i64::MAX, i64::MIN, -1] {
            assert_eq!(read(&value.to_string()), Value(value));
            assert_eq!(read(&format!("{value}.0")), Value(value));
            assert_eq!(read(&format!("{value}0e-1")), Value(value));
        }
    }
}
