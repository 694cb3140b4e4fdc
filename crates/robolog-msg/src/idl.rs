//! The IDL that rosidl generates and that ROS 2 packages write by hand (`ros2idl` schemas and
//! `IDL:` sections), read into the same [`MessageDefinition`] model as `.msg` texts.
//!
//! The subset is what `rosidl_adapter` emits and `rosidl_parser` reads: modules, structs,
//! typedefs (of arrays too), `sequence<T>` and `sequence<T, N>`, `string<N>`, `wstring` and
//! `wstring<N>`, the ROS integer names and the classic ones (`short`, `unsigned long long`, …),
//! constants in a `<Struct>_Constants` module with literal expressions, `@default` values,
//! `//` and `/* */` comments, `#include` (other preprocessor lines are ignored), and the
//! `structure_needs_at_least_one_member` of an empty struct (dropped: an empty struct is an
//! empty message). Every other annotation is skipped. `enum`, `union`, `@optional`, `@key`,
//! inheritance, `wchar` and `long double` are outside what ROS 2 messages can carry and are
//! rejected with an error at their position.
//!
//! The IDL comes from untrusted files: nesting is bounded, no input makes the parser recurse
//! deeper than [`MAX_DEPTH`], and every error is a [`SyntaxError`] with line and column.

use std::collections::HashMap;

use crate::error::{Error, SyntaxError};
use crate::model::{
    ArrayKind, Constant, DefaultValue, Dialect, ElementType, Field, FieldType, MessageDefinition,
    PrimitiveType, Value,
};
use crate::name::TypeName;

/// How deep modules, type specifications, expressions and typedef chains may nest.
const MAX_DEPTH: usize = 64;

/// The member rosidl_adapter puts into an empty struct.
const EMPTY_STRUCT_MEMBER: &str = "structure_needs_at_least_one_member";

// ---------------------------------------------------------------------------------------------
// Tokens

#[derive(Debug, Clone, PartialEq)]
enum TokenKind {
    Ident(String),
    Int(u128),
    Float(f64),
    Str(String),
    Char(u32),
    Punct(&'static str),
}

#[derive(Debug, Clone)]
struct Token {
    kind: TokenKind,
    /// Byte range in the file text.
    start: usize,
    end: usize,
}

const PUNCTUATION: [&str; 21] = [
    "::", "<<", ">>", "{", "}", "(", ")", "<", ">", "[", "]", ";", ",", "=", "@", "+", "-", "*",
    "/", "%", "~",
];
const MORE_PUNCTUATION: [&str; 4] = ["|", "^", "&", ":"];

/// One IDL file (one schema section).
struct Source<'a> {
    /// The section's type name, for errors.
    name: String,
    text: &'a str,
    /// Line number of the text's first line within the whole schema.
    first_line: usize,
}

impl Source<'_> {
    /// An error at byte offset `at` (clamped to the text).
    fn error_at(&self, at: usize, found_len: usize, expected: impl Into<String>) -> SyntaxError {
        let at = floor_char_boundary(self.text, at.min(self.text.len()));
        let line_start = self
            .text
            .get(..at)
            .and_then(|t| t.rfind('\n'))
            .map_or(0, |i| i + 1);
        let line_end = self
            .text
            .get(at..)
            .and_then(|t| t.find('\n'))
            .map_or(self.text.len(), |i| at + i);
        let line_number = self
            .text
            .get(..at)
            .map_or(0, |t| t.bytes().filter(|&b| b == b'\n').count());
        let column = self
            .text
            .get(line_start..at)
            .map_or(0, |t| t.chars().count())
            + 1;
        let found_end = floor_char_boundary(self.text, (at + found_len).min(line_end));
        SyntaxError {
            type_name: self.name.clone(),
            line: self.first_line + line_number,
            column,
            expected: expected.into(),
            found: self.text.get(at..found_end).unwrap_or("").to_owned(),
            line_text: self.text.get(line_start..line_end).unwrap_or("").to_owned(),
        }
    }

    fn error(&self, token: &Token, expected: impl Into<String>) -> SyntaxError {
        self.error_at(token.start, token.end - token.start, expected)
    }
}

fn floor_char_boundary(text: &str, mut at: usize) -> usize {
    while at > 0 && !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// Splits a file into tokens and its `#include` targets.
fn tokenize(source: &Source<'_>) -> Result<(Vec<Token>, Vec<String>), SyntaxError> {
    let text = source.text;
    let bytes = text.as_bytes();
    let mut tokens = Vec::new();
    let mut includes = Vec::new();
    let mut at = 0;
    let mut line_start = true;
    while at < bytes.len() {
        let byte = bytes[at];
        if byte == b'\n' {
            line_start = true;
            at += 1;
            continue;
        }
        if byte.is_ascii_whitespace() {
            at += 1;
            continue;
        }
        if byte == b'#' && line_start {
            let end = text
                .get(at..)
                .and_then(|t| t.find('\n'))
                .map_or(text.len(), |i| at + i);
            let directive = text.get(at + 1..end).unwrap_or("").trim();
            if let Some(target) = directive.strip_prefix("include") {
                let target = target.trim();
                let inner = target
                    .strip_prefix('"')
                    .and_then(|t| t.strip_suffix('"'))
                    .or_else(|| target.strip_prefix('<').and_then(|t| t.strip_suffix('>')));
                match inner {
                    Some(inner) => includes.push(inner.to_owned()),
                    None => {
                        return Err(source.error_at(
                            at,
                            end - at,
                            "`#include \"file\"` or `#include <file>`",
                        ));
                    }
                }
            }
            at = end;
            continue;
        }
        line_start = false;
        if text.get(at..).is_some_and(|t| t.starts_with("//")) {
            at = text
                .get(at..)
                .and_then(|t| t.find('\n'))
                .map_or(text.len(), |i| at + i);
            continue;
        }
        if text.get(at..).is_some_and(|t| t.starts_with("/*")) {
            match text.get(at + 2..).and_then(|t| t.find("*/")) {
                Some(end) => {
                    // A comment spanning lines does not start a line for `#`.
                    at += 2 + end + 2;
                }
                None => return Err(source.error_at(at, 2, "`*/` closing this comment")),
            }
            continue;
        }
        let start = at;
        let kind = if byte.is_ascii_alphabetic() || byte == b'_' {
            if (byte == b'L') && matches!(bytes.get(at + 1), Some(b'"' | b'\'')) {
                // A wide string or character literal: the same value for us.
                at += 1;
                continue;
            }
            while at < bytes.len() && (bytes[at].is_ascii_alphanumeric() || bytes[at] == b'_') {
                at += 1;
            }
            TokenKind::Ident(text.get(start..at).unwrap_or("").to_owned())
        } else if byte.is_ascii_digit()
            || (byte == b'.' && bytes.get(at + 1).is_some_and(u8::is_ascii_digit))
        {
            let (kind, end) = number(source, at)?;
            at = end;
            kind
        } else if byte == b'"' {
            let (value, end) = string_literal(source, at)?;
            at = end;
            TokenKind::Str(value)
        } else if byte == b'\'' {
            let (value, end) = char_literal(source, at)?;
            at = end;
            TokenKind::Char(value)
        } else {
            let rest = text.get(at..).unwrap_or("");
            let Some(punct) = PUNCTUATION
                .iter()
                .chain(MORE_PUNCTUATION.iter())
                .find(|p| rest.starts_with(**p))
            else {
                let len = rest.chars().next().map_or(1, char::len_utf8);
                return Err(source.error_at(at, len, "an IDL token"));
            };
            at += punct.len();
            TokenKind::Punct(punct)
        };
        tokens.push(Token {
            kind,
            start,
            end: at,
        });
    }
    Ok((tokens, includes))
}

/// An integer (decimal, `0x` hex, `0` octal) or floating-point literal (with the fixed-point
/// suffix `d` accepted).
fn number(source: &Source<'_>, start: usize) -> Result<(TokenKind, usize), SyntaxError> {
    let bytes = source.text.as_bytes();
    let mut at = start;
    let is = |at: usize, f: fn(&u8) -> bool| bytes.get(at).is_some_and(f);
    if bytes.get(at) == Some(&b'0') && matches!(bytes.get(at + 1), Some(b'x' | b'X')) {
        at += 2;
        let digits_start = at;
        while is(at, u8::is_ascii_hexdigit) {
            at += 1;
        }
        let digits = source.text.get(digits_start..at).unwrap_or("");
        let value = u128::from_str_radix(digits, 16)
            .map_err(|_| source.error_at(start, at - start, "a hexadecimal integer"))?;
        return Ok((TokenKind::Int(value), at));
    }
    while is(at, u8::is_ascii_digit) {
        at += 1;
    }
    let mut float = false;
    if bytes.get(at) == Some(&b'.') {
        float = true;
        at += 1;
        while is(at, u8::is_ascii_digit) {
            at += 1;
        }
    }
    if matches!(bytes.get(at), Some(b'e' | b'E')) {
        let mut exponent = at + 1;
        if matches!(bytes.get(exponent), Some(b'+' | b'-')) {
            exponent += 1;
        }
        if is(exponent, u8::is_ascii_digit) {
            float = true;
            at = exponent;
            while is(at, u8::is_ascii_digit) {
                at += 1;
            }
        }
    }
    let literal = source.text.get(start..at).unwrap_or("");
    if matches!(bytes.get(at), Some(b'd' | b'D')) {
        // IDL fixed-point literal (`8.7d`): a decimal number.
        at += 1;
        float = true;
    }
    if is(at, |b| b.is_ascii_alphanumeric() || *b == b'_') {
        return Err(source.error_at(start, at + 1 - start, "a number"));
    }
    if float {
        let value = literal
            .replace(".e", ".0e")
            .replace(".E", ".0E")
            .parse::<f64>()
            .map_err(|_| source.error_at(start, at - start, "a floating-point number"))?;
        return Ok((TokenKind::Float(value), at));
    }
    let (digits, radix) = if literal.len() > 1 && literal.starts_with('0') {
        (literal.get(1..).unwrap_or(""), 8)
    } else {
        (literal, 10)
    };
    let value = u128::from_str_radix(digits, radix)
        .map_err(|_| source.error_at(start, at - start, "an integer that fits 128 bits"))?;
    Ok((TokenKind::Int(value), at))
}

/// A `"…"` literal with C escapes; returns the value and the offset after the closing quote.
fn string_literal(source: &Source<'_>, start: usize) -> Result<(String, usize), SyntaxError> {
    let text = source.text;
    let mut value = String::new();
    let mut chars = text.get(start + 1..).unwrap_or("").char_indices();
    while let Some((offset, c)) = chars.next() {
        let at = start + 1 + offset;
        match c {
            '"' => return Ok((value, at + 1)),
            '\n' => break,
            '\\' => {
                let Some((_, escaped)) = chars.next() else {
                    break;
                };
                let simple = match escaped {
                    'n' => Some('\n'),
                    't' => Some('\t'),
                    'v' => Some('\u{0b}'),
                    'b' => Some('\u{08}'),
                    'r' => Some('\r'),
                    'f' => Some('\u{0c}'),
                    'a' => Some('\u{07}'),
                    '\\' | '?' | '\'' | '"' => Some(escaped),
                    _ => None,
                };
                if let Some(c) = simple {
                    value.push(c);
                    continue;
                }
                let (radix, max_digits, first) = match escaped {
                    'x' => (16, 2, None),
                    'u' => (16, 4, None),
                    '0'..='7' => (8, 3, Some(escaped)),
                    _ => return Err(source.error_at(at, 2, "a known escape sequence")),
                };
                let mut digits: String = first.into_iter().collect();
                let mut lookahead = chars.clone();
                while digits.len() < max_digits {
                    match lookahead.next() {
                        Some((_, d)) if d.is_digit(radix) => {
                            digits.push(d);
                            chars.next();
                        }
                        _ => break,
                    }
                }
                let code = u32::from_str_radix(&digits, radix)
                    .ok()
                    .and_then(char::from_u32);
                match code {
                    Some(c) => value.push(c),
                    None => return Err(source.error_at(at, 2, "a valid character escape")),
                }
            }
            c => value.push(c),
        }
    }
    Err(source.error_at(start, 1, "a closing `\"` on the same line"))
}

fn char_literal(source: &Source<'_>, start: usize) -> Result<(u32, usize), SyntaxError> {
    let rest = source.text.get(start + 1..).unwrap_or("");
    let mut chars = rest.char_indices();
    let value = match chars.next() {
        Some((_, '\\')) => match chars.next() {
            Some((_, 'n')) => '\n',
            Some((_, 't')) => '\t',
            Some((_, '0')) => '\0',
            Some((_, c @ ('\\' | '\'' | '"'))) => c,
            _ => return Err(source.error_at(start, 2, "a character literal")),
        },
        Some((_, c)) if c != '\'' => c,
        _ => return Err(source.error_at(start, 1, "a character literal")),
    };
    match chars.next() {
        Some((offset, '\'')) => Ok((u32::from(value), start + 1 + offset + 1)),
        _ => Err(source.error_at(start, 1, "a closing `'`")),
    }
}

// ---------------------------------------------------------------------------------------------
// Syntax tree

#[derive(Debug, Clone)]
enum TypeSpec {
    Primitive(PrimitiveType),
    String {
        wide: bool,
        bound: Option<Expr>,
    },
    Sequence {
        element: Box<TypeSpec>,
        bound: Option<Expr>,
    },
    /// A scoped name (`a::b::C`, `::a::B`), resolved later.
    Named {
        path: Vec<String>,
        absolute: bool,
        token: usize,
    },
}

#[derive(Debug, Clone)]
enum Expr {
    Int(i128),
    Float(f64),
    Bool(bool),
    Str(String),
    Name { path: Vec<String>, absolute: bool },
    Unary(&'static str, Box<Expr>),
    Binary(&'static str, Box<Expr>, Box<Expr>),
}

#[derive(Debug, Clone)]
struct Declarator {
    name: String,
    dims: Vec<Expr>,
    token: usize,
}

#[derive(Debug, Clone)]
struct Member {
    ty: TypeSpec,
    declarators: Vec<Declarator>,
    default: Option<Expr>,
}

#[derive(Debug, Clone)]
enum Definition {
    Module {
        name: String,
        body: Vec<Definition>,
    },
    Struct {
        name: String,
        members: Vec<Member>,
        token: usize,
    },
    Typedef {
        ty: TypeSpec,
        declarators: Vec<Declarator>,
    },
    Const {
        ty: TypeSpec,
        name: String,
        value: Expr,
        token: usize,
    },
}

/// What one annotation list said that matters.
#[derive(Debug, Default)]
struct Annotations {
    default: Option<Expr>,
}

struct Parser<'s, 'a> {
    source: &'s Source<'a>,
    tokens: Vec<Token>,
    at: usize,
    depth: usize,
}

type ParseResult<T> = Result<T, SyntaxError>;

impl Parser<'_, '_> {
    fn peek(&self) -> Option<&TokenKind> {
        self.tokens.get(self.at).map(|t| &t.kind)
    }

    fn peek_at(&self, offset: usize) -> Option<&TokenKind> {
        self.tokens.get(self.at + offset).map(|t| &t.kind)
    }

    fn is_punct(&self, punct: &str) -> bool {
        matches!(self.peek(), Some(TokenKind::Punct(p)) if *p == punct)
    }

    fn is_ident(&self, word: &str) -> bool {
        matches!(self.peek(), Some(TokenKind::Ident(i)) if i == word)
    }

    /// An error at the current token (or at the end of the text).
    fn error(&self, expected: impl Into<String>) -> SyntaxError {
        match self.tokens.get(self.at) {
            Some(token) => self.source.error(token, expected),
            None => self.source.error_at(self.source.text.len(), 0, expected),
        }
    }

    fn error_at_token(&self, index: usize, expected: impl Into<String>) -> SyntaxError {
        match self.tokens.get(index) {
            Some(token) => self.source.error(token, expected),
            None => self.error(expected),
        }
    }

    fn expect_punct(&mut self, punct: &str) -> ParseResult<()> {
        if self.is_punct(punct) {
            self.at += 1;
            Ok(())
        } else {
            Err(self.error(format!("`{punct}`")))
        }
    }

    fn identifier(&mut self, what: &str) -> ParseResult<String> {
        match self.peek() {
            Some(TokenKind::Ident(name)) => {
                let name = name.clone();
                self.at += 1;
                Ok(name)
            }
            _ => Err(self.error(what.to_owned())),
        }
    }

    fn enter(&mut self) -> ParseResult<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.error(format!("at most {MAX_DEPTH} levels of nesting")));
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    fn definitions(&mut self, in_module: bool) -> ParseResult<Vec<Definition>> {
        let mut out = Vec::new();
        loop {
            if self.peek().is_none() {
                if in_module {
                    return Err(self.error("`}` closing the module"));
                }
                return Ok(out);
            }
            if in_module && self.is_punct("}") {
                return Ok(out);
            }
            if self.is_punct(";") {
                self.at += 1;
                continue;
            }
            let annotations = self.annotations()?;
            if let Some(definition) = self.definition(annotations)? {
                out.push(definition);
            }
        }
    }

    fn definition(&mut self, _annotations: Annotations) -> ParseResult<Option<Definition>> {
        let keyword = match self.peek() {
            Some(TokenKind::Ident(word)) => word.clone(),
            _ => return Err(self.error("`module`, `struct`, `typedef` or `const`")),
        };
        let start = self.at;
        match keyword.as_str() {
            "module" => {
                self.at += 1;
                let name = self.identifier("a module name")?;
                self.expect_punct("{")?;
                self.enter()?;
                let body = self.definitions(true)?;
                self.leave();
                self.expect_punct("}")?;
                self.expect_punct(";")?;
                Ok(Some(Definition::Module { name, body }))
            }
            "struct" => {
                self.at += 1;
                let name = self.identifier("a struct name")?;
                if self.is_punct(";") {
                    // A forward declaration.
                    self.at += 1;
                    return Ok(None);
                }
                if self.is_punct(":") {
                    return Err(self.error(
                        "`{` (struct inheritance is outside the ROS 2 IDL subset)".to_owned(),
                    ));
                }
                self.expect_punct("{")?;
                let mut members = Vec::new();
                while !self.is_punct("}") {
                    if self.peek().is_none() {
                        return Err(self.error("`}` closing the struct"));
                    }
                    members.push(self.member()?);
                }
                self.expect_punct("}")?;
                self.expect_punct(";")?;
                Ok(Some(Definition::Struct {
                    name,
                    members,
                    token: start + 1,
                }))
            }
            "typedef" => {
                self.at += 1;
                let ty = self.type_spec()?;
                let declarators = self.declarators()?;
                self.expect_punct(";")?;
                Ok(Some(Definition::Typedef { ty, declarators }))
            }
            "const" => {
                self.at += 1;
                let ty = self.type_spec()?;
                let token = self.at;
                let name = self.identifier("a constant name")?;
                self.expect_punct("=")?;
                let value = self.expression()?;
                self.expect_punct(";")?;
                Ok(Some(Definition::Const {
                    ty,
                    name,
                    value,
                    token,
                }))
            }
            "enum" | "union" | "bitmask" | "bitset" | "exception" | "interface" | "valuetype"
            | "native" | "component" | "home" | "eventtype" => Err(self.error(format!(
                "a module, struct, typedef or constant (`{keyword}` is outside the ROS 2 IDL \
                 subset: no ROS 2 message can carry it)"
            ))),
            _ => Err(self.error("`module`, `struct`, `typedef` or `const`")),
        }
    }

    /// Annotations before a definition or member: skipped, except `@default`, and `@key` and
    /// `@optional`, which ROS 2 messages cannot express.
    fn annotations(&mut self) -> ParseResult<Annotations> {
        let mut annotations = Annotations::default();
        while self.is_punct("@") {
            let at = self.at;
            self.at += 1;
            let mut name = self.identifier("an annotation name")?;
            while self.is_punct("::") {
                self.at += 1;
                name = self.identifier("an annotation name")?;
            }
            match name.as_str() {
                "key" | "optional" | "external" | "shared" => {
                    return Err(self.error_at_token(
                        at,
                        format!(
                            "a ROS 2 member (`@{name}` changes what is sent, and ROS 2 messages \
                             do not support it)"
                        ),
                    ));
                }
                _ => {}
            }
            if !self.is_punct("(") {
                continue;
            }
            if name == "default" {
                self.at += 1;
                let value = if matches!(self.peek(), Some(TokenKind::Ident(i)) if i == "value")
                    && matches!(self.peek_at(1), Some(TokenKind::Punct("=")))
                {
                    self.at += 2;
                    self.expression()?
                } else {
                    self.expression()?
                };
                self.expect_punct(")")?;
                annotations.default = Some(value);
                continue;
            }
            // Skip the balanced parameters; string literals were tokenized, so their `)` and
            // escaped quotes cannot confuse this.
            let mut level = 0usize;
            loop {
                match self.peek() {
                    None => return Err(self.error("`)` closing the annotation")),
                    Some(TokenKind::Punct("(")) => level += 1,
                    Some(TokenKind::Punct(")")) => {
                        level = level.saturating_sub(1);
                        if level == 0 {
                            self.at += 1;
                            break;
                        }
                    }
                    _ => {}
                }
                self.at += 1;
            }
        }
        Ok(annotations)
    }

    fn member(&mut self) -> ParseResult<Member> {
        let annotations = self.annotations()?;
        let ty = self.type_spec()?;
        let declarators = self.declarators()?;
        self.expect_punct(";")?;
        Ok(Member {
            ty,
            declarators,
            default: annotations.default,
        })
    }

    fn declarators(&mut self) -> ParseResult<Vec<Declarator>> {
        let mut out = Vec::new();
        loop {
            let token = self.at;
            let name = self.identifier("a name")?;
            let mut dims = Vec::new();
            while self.is_punct("[") {
                self.at += 1;
                dims.push(self.expression()?);
                self.expect_punct("]")?;
            }
            out.push(Declarator { name, dims, token });
            if !self.is_punct(",") {
                return Ok(out);
            }
            self.at += 1;
        }
    }

    fn type_spec(&mut self) -> ParseResult<TypeSpec> {
        self.enter()?;
        let result = self.type_spec_inner();
        self.leave();
        result
    }

    fn type_spec_inner(&mut self) -> ParseResult<TypeSpec> {
        let start = self.at;
        let word = match self.peek() {
            Some(TokenKind::Ident(word)) => word.clone(),
            Some(TokenKind::Punct("::")) => String::new(),
            _ => return Err(self.error("a type")),
        };
        let primitive = |p| Ok(TypeSpec::Primitive(p));
        match word.as_str() {
            "boolean" => self.single(primitive(PrimitiveType::Bool)),
            "octet" => self.single(primitive(PrimitiveType::Byte)),
            "char" => self.single(primitive(PrimitiveType::Char)),
            "int8" => self.single(primitive(PrimitiveType::Int8)),
            "uint8" => self.single(primitive(PrimitiveType::UInt8)),
            "int16" => self.single(primitive(PrimitiveType::Int16)),
            "uint16" => self.single(primitive(PrimitiveType::UInt16)),
            "int32" => self.single(primitive(PrimitiveType::Int32)),
            "uint32" => self.single(primitive(PrimitiveType::UInt32)),
            "int64" => self.single(primitive(PrimitiveType::Int64)),
            "uint64" => self.single(primitive(PrimitiveType::UInt64)),
            "float" => self.single(primitive(PrimitiveType::Float32)),
            "double" => self.single(primitive(PrimitiveType::Float64)),
            "short" => self.single(primitive(PrimitiveType::Int16)),
            "long" => {
                self.at += 1;
                if self.is_ident("long") {
                    self.at += 1;
                    return primitive(PrimitiveType::Int64);
                }
                if self.is_ident("double") {
                    return Err(self.error_at_token(
                        start,
                        "a ROS 2 type (`long double` has no agreed wire size, and rosidl cannot \
                         hash it)",
                    ));
                }
                primitive(PrimitiveType::Int32)
            }
            "unsigned" => {
                self.at += 1;
                let width = self.identifier("`short` or `long` after `unsigned`")?;
                match width.as_str() {
                    "short" => primitive(PrimitiveType::UInt16),
                    "long" if self.is_ident("long") => {
                        self.at += 1;
                        primitive(PrimitiveType::UInt64)
                    }
                    "long" => primitive(PrimitiveType::UInt32),
                    _ => Err(self.error_at_token(start + 1, "`short` or `long`")),
                }
            }
            "wchar" => Err(self.error(
                "a ROS 2 type (`wchar` is not supported: implementations disagree on its size)",
            )),
            "string" | "wstring" => {
                self.at += 1;
                let bound = self.optional_bound()?;
                Ok(TypeSpec::String {
                    wide: word == "wstring",
                    bound,
                })
            }
            "sequence" => {
                self.at += 1;
                self.expect_punct("<")?;
                let element = Box::new(self.type_spec()?);
                let bound = if self.is_punct(",") {
                    self.at += 1;
                    Some(self.shift_expression()?)
                } else {
                    None
                };
                self.expect_close_angle()?;
                Ok(TypeSpec::Sequence { element, bound })
            }
            "map" | "fixed" | "any" | "Object" | "ValueBase" | "enum" | "union" | "struct"
            | "bitmask" | "bitset" | "module" | "typedef" | "const" | "interface" => Err(self
                .error(format!(
                    "a ROS 2 type (`{word}` is outside the ROS 2 IDL subset there)"
                ))),
            _ => {
                let absolute = self.is_punct("::");
                if absolute {
                    self.at += 1;
                }
                let mut path = vec![self.identifier("a type name")?];
                while self.is_punct("::") {
                    self.at += 1;
                    path.push(self.identifier("a name after `::`")?);
                }
                Ok(TypeSpec::Named {
                    path,
                    absolute,
                    token: start,
                })
            }
        }
    }

    fn single(&mut self, result: ParseResult<TypeSpec>) -> ParseResult<TypeSpec> {
        self.at += 1;
        result
    }

    /// `<N>` after `string`/`wstring`.
    fn optional_bound(&mut self) -> ParseResult<Option<Expr>> {
        if !self.is_punct("<") {
            return Ok(None);
        }
        self.at += 1;
        let bound = self.shift_expression()?;
        self.expect_close_angle()?;
        Ok(Some(bound))
    }

    /// The `>` closing a template; the first half of a `>>` token (`sequence<sequence<T>>`).
    fn expect_close_angle(&mut self) -> ParseResult<()> {
        if self.is_punct(">>")
            && let Some(token) = self.tokens.get_mut(self.at)
        {
            token.kind = TokenKind::Punct(">");
            token.start += 1;
            return Ok(());
        }
        self.expect_punct(">")
    }

    fn expression(&mut self) -> ParseResult<Expr> {
        self.binary(0)
    }

    /// Inside `<…>`, `>` ends the bound, so only additive expressions and below are allowed
    /// (a shift needs parentheses there, as in IDL compilers).
    fn shift_expression(&mut self) -> ParseResult<Expr> {
        self.binary(4)
    }

    /// Precedence climbing over `|`, `^`, `&`, `<< >>`, `+ -`, `* / %`.
    fn binary(&mut self, level: usize) -> ParseResult<Expr> {
        const LEVELS: [&[&str]; 6] = [
            &["|"],
            &["^"],
            &["&"],
            &["<<", ">>"],
            &["+", "-"],
            &["*", "/", "%"],
        ];
        self.enter()?;
        let result = (|| {
            let Some(operators) = LEVELS.get(level) else {
                return self.unary();
            };
            let mut left = self.binary(level + 1)?;
            loop {
                let Some(TokenKind::Punct(op)) = self.peek() else {
                    return Ok(left);
                };
                let Some(op) = operators.iter().find(|o| **o == *op) else {
                    return Ok(left);
                };
                self.at += 1;
                let right = self.binary(level + 1)?;
                left = Expr::Binary(op, Box::new(left), Box::new(right));
            }
        })();
        self.leave();
        result
    }

    fn unary(&mut self) -> ParseResult<Expr> {
        for op in ["-", "+", "~"] {
            if self.is_punct(op) {
                self.at += 1;
                self.enter()?;
                let operand = self.unary();
                self.leave();
                return Ok(Expr::Unary(op, Box::new(operand?)));
            }
        }
        self.primary()
    }

    fn primary(&mut self) -> ParseResult<Expr> {
        let Some(kind) = self.peek().cloned() else {
            return Err(self.error("a value"));
        };
        match kind {
            TokenKind::Int(value) => {
                self.at += 1;
                let value = i128::try_from(value).map_err(|_| {
                    self.error_at_token(self.at - 1, "an integer that fits 127 bits")
                })?;
                Ok(Expr::Int(value))
            }
            TokenKind::Float(value) => {
                self.at += 1;
                Ok(Expr::Float(value))
            }
            TokenKind::Char(value) => {
                self.at += 1;
                Ok(Expr::Int(i128::from(value)))
            }
            TokenKind::Str(mut value) => {
                self.at += 1;
                // Adjacent literals concatenate.
                while let Some(TokenKind::Str(next)) = self.peek() {
                    value.push_str(next);
                    self.at += 1;
                }
                Ok(Expr::Str(value))
            }
            TokenKind::Punct("(") => {
                self.at += 1;
                let inner = self.expression()?;
                self.expect_punct(")")?;
                Ok(inner)
            }
            TokenKind::Ident(word) if word == "TRUE" => {
                self.at += 1;
                Ok(Expr::Bool(true))
            }
            TokenKind::Ident(word) if word == "FALSE" => {
                self.at += 1;
                Ok(Expr::Bool(false))
            }
            TokenKind::Ident(_) | TokenKind::Punct("::") => {
                let absolute = self.is_punct("::");
                if absolute {
                    self.at += 1;
                }
                let mut path = vec![self.identifier("a constant name")?];
                while self.is_punct("::") {
                    self.at += 1;
                    path.push(self.identifier("a name after `::`")?);
                }
                Ok(Expr::Name { path, absolute })
            }
            TokenKind::Punct(_) => Err(self.error("a value")),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Resolution

/// A parsed file: its definitions and includes.
struct File<'a> {
    source: Source<'a>,
    tokens: Vec<Token>,
    definitions: Vec<Definition>,
}

/// A constant's value.
#[derive(Debug, Clone, PartialEq)]
enum ConstValue {
    Int(i128),
    Float(f64),
    Bool(bool),
    Str(String),
}

/// A resolved type: what a member, typedef or sequence element is.
#[derive(Debug, Clone)]
enum Resolved {
    Element(ElementType),
    Array(Box<Resolved>, u64),
    Sequence(Box<Resolved>, Option<u64>),
}

/// A typedef or constant: where it is declared, its type, and its array dimensions (typedef)
/// or value (constant).
struct Declared<T> {
    file: usize,
    scope: Vec<String>,
    ty: TypeSpec,
    value: T,
    token: usize,
}

/// Every name the files declare, by full path.
#[derive(Default)]
struct Symbols {
    typedefs: HashMap<Vec<String>, Declared<Vec<Expr>>>,
    constants: HashMap<Vec<String>, Declared<Expr>>,
    structs: HashMap<Vec<String>, ()>,
}

fn collect(symbols: &mut Symbols, file: usize, scope: &[String], definitions: &[Definition]) {
    for definition in definitions {
        match definition {
            Definition::Module { name, body } => {
                let mut inner = scope.to_vec();
                inner.push(name.clone());
                collect(symbols, file, &inner, body);
            }
            Definition::Struct { name, .. } => {
                symbols.structs.insert(path_in(scope, name), ());
            }
            Definition::Typedef { ty, declarators } => {
                for declarator in declarators {
                    symbols
                        .typedefs
                        .entry(path_in(scope, &declarator.name))
                        .or_insert(Declared {
                            file,
                            scope: scope.to_vec(),
                            ty: ty.clone(),
                            value: declarator.dims.clone(),
                            token: declarator.token,
                        });
                }
            }
            Definition::Const {
                ty,
                name,
                value,
                token,
            } => {
                symbols
                    .constants
                    .entry(path_in(scope, name))
                    .or_insert(Declared {
                        file,
                        scope: scope.to_vec(),
                        ty: ty.clone(),
                        value: value.clone(),
                        token: *token,
                    });
            }
        }
    }
}

fn path_in(scope: &[String], name: &str) -> Vec<String> {
    let mut path = scope.to_vec();
    path.push(name.to_owned());
    path
}

/// Candidate full paths of a scoped name used in `scope`, innermost scope first.
fn candidates(scope: &[String], path: &[String], absolute: bool) -> Vec<Vec<String>> {
    if absolute {
        return vec![path.to_vec()];
    }
    (0..=scope.len())
        .rev()
        .map(|depth| {
            let mut full = scope.get(..depth).unwrap_or(&[]).to_vec();
            full.extend(path.iter().cloned());
            full
        })
        .collect()
}

struct Resolver<'f, 'a> {
    files: &'f [File<'a>],
    symbols: Symbols,
}

impl Resolver<'_, '_> {
    fn file_error(&self, file: usize, token: usize, expected: impl Into<String>) -> SyntaxError {
        let file = &self.files[file];
        match file.tokens.get(token) {
            Some(t) => file.source.error(t, expected),
            None => file.source.error_at(0, 0, expected),
        }
    }

    fn constant(
        &self,
        file: usize,
        token: usize,
        scope: &[String],
        path: &[String],
        absolute: bool,
        depth: usize,
    ) -> Result<ConstValue, SyntaxError> {
        for candidate in candidates(scope, path, absolute) {
            if let Some(constant) = self.symbols.constants.get(&candidate) {
                if depth > MAX_DEPTH {
                    return Err(self.file_error(
                        file,
                        token,
                        "constants that do not refer to themselves",
                    ));
                }
                return self.evaluate(
                    constant.file,
                    constant.token,
                    &constant.scope,
                    &constant.value,
                    depth + 1,
                );
            }
        }
        Err(self.file_error(
            file,
            token,
            format!("a known constant, not `{}`", path.join("::")),
        ))
    }

    fn evaluate(
        &self,
        file: usize,
        token: usize,
        scope: &[String],
        expr: &Expr,
        depth: usize,
    ) -> Result<ConstValue, SyntaxError> {
        if depth > MAX_DEPTH {
            return Err(self.file_error(
                file,
                token,
                format!("at most {MAX_DEPTH} levels of nesting"),
            ));
        }
        let error = |what: &str| self.file_error(file, token, what.to_owned());
        Ok(match expr {
            Expr::Int(v) => ConstValue::Int(*v),
            Expr::Float(v) => ConstValue::Float(*v),
            Expr::Bool(v) => ConstValue::Bool(*v),
            Expr::Str(v) => ConstValue::Str(v.clone()),
            Expr::Name { path, absolute } => {
                self.constant(file, token, scope, path, *absolute, depth + 1)?
            }
            Expr::Unary(op, operand) => {
                match (*op, self.evaluate(file, token, scope, operand, depth + 1)?) {
                    ("-", ConstValue::Int(v)) => ConstValue::Int(
                        v.checked_neg()
                            .ok_or_else(|| error("an integer in range"))?,
                    ),
                    ("-", ConstValue::Float(v)) => ConstValue::Float(-v),
                    ("+", v @ (ConstValue::Int(_) | ConstValue::Float(_))) => v,
                    ("~", ConstValue::Int(v)) => ConstValue::Int(!v),
                    _ => return Err(error("an operand of the right type for this operator")),
                }
            }
            Expr::Binary(op, left, right) => {
                let left = self.evaluate(file, token, scope, left, depth + 1)?;
                let right = self.evaluate(file, token, scope, right, depth + 1)?;
                binary(op, left, right).ok_or_else(|| {
                    error("operands of the right type and in range for this operator")
                })?
            }
        })
    }

    /// A non-negative integer (an array size or bound), at least 1.
    fn size(
        &self,
        file: usize,
        token: usize,
        scope: &[String],
        expr: &Expr,
    ) -> Result<u64, SyntaxError> {
        match self.evaluate(file, token, scope, expr, 0)? {
            ConstValue::Int(v) if v > 0 => u64::try_from(v)
                .map_err(|_| self.file_error(file, token, "a size that fits 64 bits")),
            _ => Err(self.file_error(file, token, "a size: an integer > 0")),
        }
    }

    fn resolve_type(
        &self,
        file: usize,
        scope: &[String],
        ty: &TypeSpec,
        token: usize,
        depth: usize,
    ) -> Result<Resolved, SyntaxError> {
        if depth > MAX_DEPTH {
            return Err(self.file_error(file, token, "typedefs that do not refer to themselves"));
        }
        Ok(match ty {
            TypeSpec::Primitive(p) => Resolved::Element(ElementType::Primitive(*p)),
            TypeSpec::String { wide, bound: None } => {
                Resolved::Element(ElementType::Primitive(if *wide {
                    PrimitiveType::WString
                } else {
                    PrimitiveType::String
                }))
            }
            TypeSpec::String {
                wide,
                bound: Some(bound),
            } => Resolved::Element(ElementType::BoundedString {
                wide: *wide,
                max_len: self.size(file, token, scope, bound)?,
            }),
            TypeSpec::Sequence { element, bound } => {
                let element = self.resolve_type(file, scope, element, token, depth + 1)?;
                let bound = match bound {
                    Some(bound) => Some(self.size(file, token, scope, bound)?),
                    None => None,
                };
                Resolved::Sequence(Box::new(element), bound)
            }
            TypeSpec::Named {
                path,
                absolute,
                token,
            } => {
                let token = *token;
                for candidate in candidates(scope, path, *absolute) {
                    if let Some(typedef) = self.symbols.typedefs.get(&candidate) {
                        let mut resolved = self.resolve_type(
                            typedef.file,
                            &typedef.scope,
                            &typedef.ty,
                            typedef.token,
                            depth + 1,
                        )?;
                        for dim in typedef.value.iter().rev() {
                            let size =
                                self.size(typedef.file, typedef.token, &typedef.scope, dim)?;
                            resolved = Resolved::Array(Box::new(resolved), size);
                        }
                        return Ok(resolved);
                    }
                    if self.symbols.structs.contains_key(&candidate) {
                        return self.message(file, token, &candidate);
                    }
                }
                // Not declared in these files: a type of another file (reported by name if
                // no section defines it), relative names in the innermost scope.
                let full = if *absolute {
                    path.clone()
                } else if path.len() == 1 {
                    let mut full = scope.to_vec();
                    full.extend(path.iter().cloned());
                    full
                } else {
                    path.clone()
                };
                self.message(file, token, &full)?
            }
        })
    }

    fn message(&self, file: usize, token: usize, path: &[String]) -> Result<Resolved, SyntaxError> {
        type_name_of(path)
            .map(|name| Resolved::Element(ElementType::Message(name)))
            .ok_or_else(|| {
                self.file_error(
                    file,
                    token,
                    format!(
                        "a ROS 2 type `pkg::msg::Type` (or `srv`, `action`), not `{}`",
                        path.join("::")
                    ),
                )
            })
    }
}

/// `pkg::msg::Type` (or `srv`/`action`, or `pkg::Type`) as a type name.
fn type_name_of(path: &[String]) -> Option<TypeName> {
    match path {
        [package, namespace, name] if matches!(namespace.as_str(), "msg" | "srv" | "action") => {
            TypeName::new(package, name).ok()
        }
        [package, name] => TypeName::new(package, name).ok(),
        _ => None,
    }
}

fn binary(op: &str, left: ConstValue, right: ConstValue) -> Option<ConstValue> {
    use ConstValue::{Float, Int, Str};
    Some(match (left, right) {
        (Int(a), Int(b)) => Int(match op {
            "|" => a | b,
            "^" => a ^ b,
            "&" => a & b,
            "<<" => a.checked_shl(u32::try_from(b).ok().filter(|&s| s < 127)?)?,
            ">>" => a.checked_shr(u32::try_from(b).ok().filter(|&s| s < 127)?)?,
            "+" => a.checked_add(b)?,
            "-" => a.checked_sub(b)?,
            "*" => a.checked_mul(b)?,
            "/" => a.checked_div(b)?,
            "%" => a.checked_rem(b)?,
            _ => return None,
        }),
        (a @ (Int(_) | Float(_)), b @ (Int(_) | Float(_))) => {
            let as_float = |v: ConstValue| match v {
                Int(i) => i as f64,
                Float(f) => f,
                _ => 0.0,
            };
            let (a, b) = (as_float(a), as_float(b));
            Float(match op {
                "+" => a + b,
                "-" => a - b,
                "*" => a * b,
                "/" => a / b,
                _ => return None,
            })
        }
        (Str(a), Str(b)) if op == "+" => Str(a + &b),
        _ => return None,
    })
}

/// The `.msg` spelling of a resolved field type, and the type itself.
fn field_type(resolved: Resolved) -> Option<FieldType> {
    let scalar = |r: Resolved| match r {
        Resolved::Element(element) => Some(element),
        _ => None,
    };
    Some(match resolved {
        Resolved::Element(element) => FieldType {
            element,
            array: ArrayKind::Scalar,
        },
        Resolved::Array(inner, n) => FieldType {
            element: scalar(*inner)?,
            array: ArrayKind::Fixed(n),
        },
        Resolved::Sequence(inner, bound) => FieldType {
            element: scalar(*inner)?,
            array: bound.map_or(ArrayKind::Variable, ArrayKind::Bounded),
        },
    })
}

/// How a field type is written in a `.msg` file.
fn msg_type_text(ty: &FieldType) -> String {
    let element = match &ty.element {
        ElementType::Primitive(p) => p.as_str().to_owned(),
        ElementType::BoundedString { wide, max_len } => {
            format!("{}<={max_len}", if *wide { "wstring" } else { "string" })
        }
        ElementType::Message(name) => name.to_string(),
    };
    match ty.array {
        ArrayKind::Scalar => element,
        ArrayKind::Fixed(n) => format!("{element}[{n}]"),
        ArrayKind::Variable => format!("{element}[]"),
        ArrayKind::Bounded(n) => format!("{element}[<={n}]"),
    }
}

/// A constant or default value of `primitive`, as the model holds it, with its `.msg` text.
fn model_value(primitive: PrimitiveType, value: &ConstValue) -> Option<(Value, String)> {
    Some(match (primitive, value) {
        (PrimitiveType::Bool, ConstValue::Bool(b)) => (Value::Bool(*b), b.to_string()),
        (PrimitiveType::Bool, ConstValue::Int(i @ (0 | 1))) => {
            (Value::Bool(*i == 1), (*i == 1).to_string())
        }
        (PrimitiveType::Float32 | PrimitiveType::Float64, ConstValue::Float(f)) => {
            (Value::Float(*f), format_float(*f))
        }
        (PrimitiveType::Float32 | PrimitiveType::Float64, ConstValue::Int(i)) => {
            (Value::Float(*i as f64), i.to_string())
        }
        (PrimitiveType::String | PrimitiveType::WString, ConstValue::Str(s)) => (
            Value::String(s.clone()),
            format!("\"{}\"", s.replace('"', "\\\"")),
        ),
        (p, ConstValue::Int(i)) if p.is_integer() => {
            let (lower, upper, signed) = integer_range(p);
            if *i < lower || *i > upper {
                return None;
            }
            (Value::from_integer(signed, *i), i.to_string())
        }
        _ => return None,
    })
}

fn format_float(value: f64) -> String {
    if value.is_finite() && value == value.trunc() && value.abs() < 1e16 {
        format!("{value:.1}")
    } else {
        format!("{value:?}")
    }
}

fn integer_range(ty: PrimitiveType) -> (i128, i128, bool) {
    match ty {
        PrimitiveType::Int8 => (-128, 127, true),
        PrimitiveType::Int16 => (i128::from(i16::MIN), i128::from(i16::MAX), true),
        PrimitiveType::Int32 => (i128::from(i32::MIN), i128::from(i32::MAX), true),
        PrimitiveType::Int64 => (i128::from(i64::MIN), i128::from(i64::MAX), true),
        PrimitiveType::UInt16 => (0, i128::from(u16::MAX), false),
        PrimitiveType::UInt32 => (0, i128::from(u32::MAX), false),
        PrimitiveType::UInt64 => (0, i128::from(u64::MAX), false),
        _ => (0, 255, false),
    }
}

/// rosidl_adapter writes array defaults as a string holding a Python tuple, `"(1, 2)"`.
fn array_default(primitive: PrimitiveType, text: &str) -> Option<Vec<ConstValue>> {
    let inner = text
        .trim()
        .strip_prefix(['(', '['])?
        .strip_suffix([')', ']'])?
        .trim()
        .trim_end_matches(',');
    if inner.is_empty() {
        return Some(Vec::new());
    }
    let mut out = Vec::new();
    for item in split_top_level(inner) {
        let item = item.trim();
        let value = match primitive {
            PrimitiveType::Bool => match item {
                "True" | "true" | "1" => ConstValue::Bool(true),
                "False" | "false" | "0" => ConstValue::Bool(false),
                _ => return None,
            },
            PrimitiveType::String | PrimitiveType::WString => {
                let quote = item.chars().next().filter(|c| *c == '\'' || *c == '"')?;
                let body = item.strip_prefix(quote)?.strip_suffix(quote)?;
                ConstValue::Str(body.replace(&format!("\\{quote}"), &quote.to_string()))
            }
            PrimitiveType::Float32 | PrimitiveType::Float64 => {
                ConstValue::Float(crate::python_literal::float(item)?)
            }
            p if p.is_integer() => ConstValue::Int(crate::python_literal::int_any_base(item).ok()?),
            _ => return None,
        };
        out.push(value);
    }
    Some(out)
}

/// Splits at commas outside quotes.
fn split_top_level(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut quote = None;
    let mut escaped = false;
    let mut start = 0;
    for (index, c) in text.char_indices() {
        match quote {
            Some(q) => {
                if escaped {
                    escaped = false;
                } else if c == '\\' {
                    escaped = true;
                } else if c == q {
                    quote = None;
                }
            }
            None if c == '\'' || c == '"' => quote = Some(c),
            None if c == ',' => {
                parts.push(text.get(start..index).unwrap_or(""));
                start = index + 1;
            }
            None => {}
        }
    }
    parts.push(text.get(start..).unwrap_or(""));
    parts
}

impl Resolver<'_, '_> {
    /// Every struct of file `index` as a message.
    fn messages(&self, index: usize) -> Result<Vec<MessageDefinition>, SyntaxError> {
        let mut out = Vec::new();
        let mut stack: Vec<(Vec<String>, &[Definition])> =
            vec![(Vec::new(), self.files[index].definitions.as_slice())];
        while let Some((scope, definitions)) = stack.pop() {
            for definition in definitions {
                match definition {
                    Definition::Module { name, body } => {
                        stack.push((path_in(&scope, name), body.as_slice()));
                    }
                    Definition::Struct {
                        name,
                        members,
                        token,
                    } => out.push(self.struct_message(index, &scope, name, members, *token)?),
                    Definition::Const {
                        ty, value, token, ..
                    } => {
                        // Checked even outside a `_Constants` module, so errors surface.
                        let value = self.evaluate(index, *token, &scope, value, 0)?;
                        self.constant_primitive(index, &scope, ty, *token, &value)?;
                    }
                    Definition::Typedef { .. } => {}
                }
            }
        }
        Ok(out)
    }

    fn constant_primitive(
        &self,
        file: usize,
        scope: &[String],
        ty: &TypeSpec,
        token: usize,
        value: &ConstValue,
    ) -> Result<(PrimitiveType, Value, String), SyntaxError> {
        let primitive = match self.resolve_type(file, scope, ty, token, 0)? {
            Resolved::Element(ElementType::Primitive(p)) => p,
            Resolved::Element(ElementType::BoundedString { wide, .. }) => {
                if wide {
                    PrimitiveType::WString
                } else {
                    PrimitiveType::String
                }
            }
            _ => {
                return Err(self.file_error(file, token, "a constant of a primitive type"));
            }
        };
        let (model, text) = model_value(primitive, value).ok_or_else(|| {
            self.file_error(
                file,
                token,
                format!("a value that fits the constant's type {primitive}"),
            )
        })?;
        Ok((primitive, model, text))
    }

    fn struct_message(
        &self,
        file: usize,
        scope: &[String],
        name: &str,
        members: &[Member],
        token: usize,
    ) -> Result<MessageDefinition, SyntaxError> {
        let path = path_in(scope, name);
        let Some(type_name) = type_name_of(&path) else {
            return Err(self.file_error(
                file,
                token,
                format!(
                    "a struct in a ROS 2 module `pkg::msg` (or `srv`, `action`), not `{}`",
                    path.join("::")
                ),
            ));
        };
        let mut fields = Vec::new();
        for member in members {
            for declarator in &member.declarators {
                let mut resolved =
                    self.resolve_type(file, scope, &member.ty, declarator.token, 0)?;
                for dim in declarator.dims.iter().rev() {
                    let size = self.size(file, declarator.token, scope, dim)?;
                    resolved = Resolved::Array(Box::new(resolved), size);
                }
                let Some(ty) = field_type(resolved) else {
                    return Err(self.file_error(
                        file,
                        declarator.token,
                        "a ROS 2 field type (arrays of arrays, sequences of sequences and \
                         arrays of sequences do not exist in ROS 2)",
                    ));
                };
                if fields.iter().any(|f: &Field| f.name == declarator.name) {
                    return Err(self.file_error(
                        file,
                        declarator.token,
                        "a member name not already used in this struct",
                    ));
                }
                let default = match &member.default {
                    Some(expr) => self.default_value(file, declarator.token, scope, &ty, expr)?,
                    None => None,
                };
                fields.push(Field {
                    name: declarator.name.clone(),
                    type_text: msg_type_text(&ty),
                    ty,
                    default,
                });
            }
        }
        if let [only] = fields.as_slice()
            && only.name == EMPTY_STRUCT_MEMBER
            && only.ty.element == ElementType::Primitive(PrimitiveType::UInt8)
            && only.ty.array == ArrayKind::Scalar
        {
            fields.clear();
        }
        let constants = self.struct_constants(scope, name)?;
        let mut definition = MessageDefinition {
            name: type_name,
            dialect: Dialect::Ros2,
            constants,
            fields,
            source: String::new(),
            warnings: Vec::new(),
        };
        definition.source = definition.canonical_text();
        Ok(definition)
    }

    /// The constants of module `<Struct>_Constants` beside the struct, in any file.
    fn struct_constants(&self, scope: &[String], name: &str) -> Result<Vec<Constant>, SyntaxError> {
        let module = path_in(scope, &format!("{name}_Constants"));
        let mut found: Vec<(usize, usize, &String, &TypeSpec, &Expr)> = Vec::new();
        for (file_index, file) in self.files.iter().enumerate() {
            let mut stack: Vec<(Vec<String>, &[Definition])> =
                vec![(Vec::new(), file.definitions.as_slice())];
            while let Some((at, definitions)) = stack.pop() {
                for definition in definitions {
                    match definition {
                        Definition::Module { name, body } => {
                            stack.push((path_in(&at, name), body.as_slice()));
                        }
                        Definition::Const {
                            ty,
                            name,
                            value,
                            token,
                        } if at == module => found.push((file_index, *token, name, ty, value)),
                        _ => {}
                    }
                }
            }
        }
        found.sort_by_key(|(file, token, ..)| (*file, *token));
        let mut constants = Vec::new();
        for (file, token, name, ty, expr) in found {
            let value = self.evaluate(file, token, &module, expr, 0)?;
            let (primitive, value, value_text) =
                self.constant_primitive(file, &module, ty, token, &value)?;
            constants.push(Constant {
                ty: primitive,
                name: name.clone(),
                value,
                value_text,
            });
        }
        Ok(constants)
    }

    fn default_value(
        &self,
        file: usize,
        token: usize,
        scope: &[String],
        ty: &FieldType,
        expr: &Expr,
    ) -> Result<Option<DefaultValue>, SyntaxError> {
        let primitive = match &ty.element {
            ElementType::Primitive(p) => *p,
            ElementType::BoundedString { wide: true, .. } => PrimitiveType::WString,
            ElementType::BoundedString { wide: false, .. } => PrimitiveType::String,
            // rosidl never writes one; nothing to keep.
            ElementType::Message(_) => return Ok(None),
        };
        let value = self.evaluate(file, token, scope, expr, 0)?;
        if ty.array == ArrayKind::Scalar {
            return Ok(
                model_value(primitive, &value).map(|(value, text)| DefaultValue { value, text })
            );
        }
        // Array defaults are metadata only: one that does not read as a tuple is dropped.
        let ConstValue::Str(text) = value else {
            return Ok(None);
        };
        let Some(items) = array_default(primitive, &text) else {
            return Ok(None);
        };
        let mut values = Vec::new();
        let mut texts = Vec::new();
        for item in &items {
            let Some((value, text)) = model_value(primitive, item) else {
                return Ok(None);
            };
            values.push(value);
            texts.push(text);
        }
        Ok(Some(DefaultValue {
            value: Value::Array(values),
            text: format!("[{}]", texts.join(", ")),
        }))
    }
}

// ---------------------------------------------------------------------------------------------
// Entry points

/// One IDL file of a schema: its section name, text and first line.
pub(crate) struct IdlInput<'a> {
    pub(crate) name: &'a TypeName,
    pub(crate) text: &'a str,
    pub(crate) first_line: usize,
}

/// Parses IDL files that may refer to each other's typedefs and constants, and returns the
/// messages of each, or why that file was rejected.
pub(crate) fn parse_files(inputs: &[IdlInput<'_>]) -> Vec<Result<Vec<MessageDefinition>, Error>> {
    let mut files = Vec::with_capacity(inputs.len());
    let mut parse_errors: Vec<Option<SyntaxError>> = Vec::with_capacity(inputs.len());
    for input in inputs {
        let source = Source {
            name: input.name.to_string(),
            text: input.text,
            first_line: input.first_line,
        };
        let parsed = tokenize(&source).and_then(|(tokens, _includes)| {
            let mut parser = Parser {
                source: &source,
                tokens,
                at: 0,
                depth: 0,
            };
            let definitions = parser.definitions(false)?;
            Ok((parser.tokens, definitions))
        });
        match parsed {
            Ok((tokens, definitions)) => {
                files.push(File {
                    source,
                    tokens,
                    definitions,
                });
                parse_errors.push(None);
            }
            Err(error) => {
                files.push(File {
                    source,
                    tokens: Vec::new(),
                    definitions: Vec::new(),
                });
                parse_errors.push(Some(error));
            }
        }
    }
    let mut symbols = Symbols::default();
    for (index, file) in files.iter().enumerate() {
        collect(&mut symbols, index, &[], &file.definitions);
    }
    let resolver = Resolver {
        files: &files,
        symbols,
    };
    parse_errors
        .into_iter()
        .enumerate()
        .map(|(index, error)| match error {
            Some(error) => Err(error.into()),
            None => resolver.messages(index).map_err(Error::from),
        })
        .collect()
}
