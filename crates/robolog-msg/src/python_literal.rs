//! Number literals as Python's `int()` and `float()` accept them.
//!
//! genmsg converts constant values with `int(text)` (decimal only) and `float(text)`; rosidl
//! tries `int(text)` and then `int(text, 0)` (which adds `0x`, `0o` and `0b`). Both accept
//! underscores between digits, leading zeros (decimal `int()` only) and `inf`/`nan`, so a value
//! the reference tools accept must parse here too, and the other way round. Only ASCII digits
//! are accepted (Python also takes other Unicode decimal digits; no real definition uses them).

use nom::branch::alt;
use nom::bytes::complete::tag_no_case;
use nom::character::complete::{char, one_of, satisfy};
use nom::combinator::{all_consuming, opt, recognize};
use nom::multi::many0;
use nom::sequence::{pair, preceded};
use nom::{IResult, Parser};

/// Why a text is not an integer of the expected kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum IntegerError {
    /// Not an integer literal at all.
    Syntax,
    /// A valid literal, but beyond any 64-bit integer type.
    TooLarge,
}

fn digits(radix: u32) -> impl Fn(&str) -> IResult<&str, &str> {
    move |input| {
        recognize(pair(
            satisfy(move |c| c.is_digit(radix)),
            many0(pair(opt(char('_')), satisfy(move |c| c.is_digit(radix)))),
        ))
        .parse(input)
    }
}

fn sign(input: &str) -> IResult<&str, Option<char>> {
    opt(one_of("+-")).parse(input)
}

fn accumulate(sign: Option<char>, digits: &str, radix: u32) -> Result<i128, IntegerError> {
    let mut value: i128 = 0;
    for c in digits.chars().filter(|&c| c != '_') {
        let digit = c.to_digit(radix).ok_or(IntegerError::Syntax)?;
        value = value
            .checked_mul(i128::from(radix))
            .and_then(|v| v.checked_add(i128::from(digit)))
            .ok_or(IntegerError::TooLarge)?;
    }
    Ok(if sign == Some('-') { -value } else { value })
}

/// Python `int(text)`: an optional sign and decimal digits (leading zeros allowed).
pub(crate) fn int_decimal(text: &str) -> Result<i128, IntegerError> {
    let (_, (sign, digits)) = all_consuming(pair(sign, digits(10)))
        .parse(text)
        .map_err(|_| IntegerError::Syntax)?;
    accumulate(sign, digits, 10)
}

/// Python `int(text, 0)`: like source-code literals, `0x`/`0o`/`0b` prefixes, and no leading
/// zeros on a decimal number other than zero itself.
pub(crate) fn int_any_base(text: &str) -> Result<i128, IntegerError> {
    let prefixed = |prefix: &'static str, radix: u32| {
        move |input| {
            preceded(pair(tag_no_case(prefix), opt(char('_'))), digits(radix))
                .parse(input)
                .map(|(rest, digits)| (rest, (digits, radix)))
        }
    };
    let zero = |input| {
        recognize(pair(char('0'), many0(pair(opt(char('_')), char('0')))))
            .parse(input)
            .map(|(rest, digits)| (rest, (digits, 10)))
    };
    let decimal = |input| {
        recognize(pair(
            one_of("123456789"),
            many0(pair(opt(char('_')), satisfy(|c: char| c.is_ascii_digit()))),
        ))
        .parse(input)
        .map(|(rest, digits)| (rest, (digits, 10)))
    };
    let (_, (sign, (digits, radix))) = all_consuming(pair(
        sign,
        alt((
            prefixed("0x", 16),
            prefixed("0o", 8),
            prefixed("0b", 2),
            decimal,
            zero,
        )),
    ))
    .parse(text)
    .map_err(|_| IntegerError::Syntax)?;
    accumulate(sign, digits, radix)
}

fn float_literal(input: &str) -> IResult<&str, &str> {
    let special = alt((
        tag_no_case("infinity"),
        tag_no_case("inf"),
        tag_no_case("nan"),
    ));
    let mantissa = alt((
        recognize((digits(10), char('.'), opt(digits(10)))),
        recognize(pair(char('.'), digits(10))),
        digits(10),
    ));
    let exponent = recognize((one_of("eE"), sign, digits(10)));
    all_consuming(recognize(pair(
        sign,
        alt((special, recognize(pair(mantissa, opt(exponent))))),
    )))
    .parse(input)
}

/// Python `float(text)`: decimal and exponent forms, `inf`, `infinity` and `nan` in any case,
/// underscores between digits.
pub(crate) fn float(text: &str) -> Option<f64> {
    let (_, literal) = float_literal(text).ok()?;
    let without_underscores: String = literal.chars().filter(|&c| c != '_').collect();
    // Rust's parser accepts every form the grammar above lets through once underscores are gone,
    // except a mantissa ending in "." before an exponent, which needs a digit.
    without_underscores
        .replace(".e", ".0e")
        .replace(".E", ".0E")
        .parse::<f64>()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_int_accepts_what_python_int_accepts() {
        assert_eq!(int_decimal("007"), Ok(7));
        assert_eq!(int_decimal("-5"), Ok(-5));
        assert_eq!(int_decimal("+1_000"), Ok(1000));
        assert_eq!(int_decimal("0x10"), Err(IntegerError::Syntax));
        assert_eq!(int_decimal("1__0"), Err(IntegerError::Syntax));
        assert_eq!(int_decimal("_1"), Err(IntegerError::Syntax));
        assert_eq!(int_decimal("1_"), Err(IntegerError::Syntax));
        assert_eq!(int_decimal(""), Err(IntegerError::Syntax));
        assert_eq!(int_decimal("1.0"), Err(IntegerError::Syntax));
        assert_eq!(
            int_decimal("9999999999999999999999999999999999999999999"),
            Err(IntegerError::TooLarge)
        );
    }

    #[test]
    fn any_base_int_accepts_what_python_int_base_0_accepts() {
        assert_eq!(int_any_base("0x1F"), Ok(31));
        assert_eq!(int_any_base("0X_1f"), Ok(31));
        assert_eq!(int_any_base("-0o17"), Ok(-15));
        assert_eq!(int_any_base("0b101"), Ok(5));
        assert_eq!(int_any_base("00"), Ok(0));
        assert_eq!(int_any_base("12"), Ok(12));
        assert_eq!(int_any_base("012"), Err(IntegerError::Syntax));
        assert_eq!(int_any_base("0x"), Err(IntegerError::Syntax));
        assert_eq!(int_any_base("0b2"), Err(IntegerError::Syntax));
    }

    #[test]
    fn float_accepts_what_python_float_accepts() {
        assert_eq!(float("1e3"), Some(1000.0));
        assert_eq!(float("2.5"), Some(2.5));
        assert_eq!(float("1."), Some(1.0));
        assert_eq!(float(".5"), Some(0.5));
        assert_eq!(float("1.e2"), Some(100.0));
        assert_eq!(float("-1_0.5"), Some(-10.5));
        assert_eq!(float("-Infinity"), Some(f64::NEG_INFINITY));
        assert!(float("nan").is_some_and(f64::is_nan));
        assert_eq!(float("."), None);
        assert_eq!(float("e5"), None);
        assert_eq!(float("1e"), None);
        assert_eq!(float("0x10"), None);
        assert_eq!(float("1,5"), None);
    }
}
