//! A serde `Deserializer` straight on the YAML crate's event parser (`granit-parser`, the
//! parser under `serde-saphyr`), for the reader's fast path on large YAML files: it skips the
//! bookkeeping `serde-saphyr` does for the general case (anchors, merge keys, duplicate-key
//! detection, comments, budgets), which costs as much as parsing itself.
//!
//! It reads the plain YAML that `oc`/`kubectl` and must-gathers write, and refuses (an error,
//! so that the caller uses the general path) what it does not read exactly like the general
//! path: anchors, aliases, tags, merge keys (`<<`), nesting deeper than [`MAX_DEPTH`], and a
//! plain scalar whose type is not certain (`yes`, `0x1F`, `0123`, `.inf`...) or is not a string
//! where a string is expected. A plain scalar is typed by the YAML 1.2 core schema, as the
//! general path types it. One difference: a key given twice in a mapping read into a map, or in
//! a part that is skipped, is not detected (the general path refuses the file).

use std::borrow::Cow;
use std::fmt;

use granit_parser::{Event, Parser, ScalarStyle, StrInput};
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::forward_to_deserialize_any;

/// The deepest nesting read (deeper: refused, so that recursion stays bounded).
pub const MAX_DEPTH: usize = 128;

/// Why the text is left to the general path.
#[derive(Debug)]
pub struct Error(String);

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

impl de::Error for Error {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Error(msg.to_string())
    }
}

fn refuse<T>(what: &str) -> Result<T, Error> {
    Err(Error(what.to_string()))
}

/// The documents of a YAML text, each read as a `T`.
pub fn documents<'a, T: de::Deserialize<'a>>(text: &'a str) -> Result<Vec<T>, Error> {
    let mut events = Events::new(text);
    let mut out = Vec::new();
    if !matches!(events.next()?, Event::StreamStart) {
        return refuse("no stream start");
    }
    loop {
        match events.next()? {
            Event::DocumentStart(..) => {
                out.push(T::deserialize(&mut events)?);
                if !matches!(events.next()?, Event::DocumentEnd) {
                    return refuse("no document end");
                }
            }
            Event::StreamEnd => return Ok(out),
            _ => return refuse("unexpected event between documents"),
        }
    }
}

/// The event stream, with one event of look-ahead.
pub struct Events<'a> {
    parser: Parser<'a, StrInput<'a>>,
    peeked: Option<Event<'a>>,
    depth: usize,
}

impl<'a> Events<'a> {
    fn new(text: &'a str) -> Self {
        let mut options = granit_parser::Options::default();
        options.set_emit_comments(false);
        Events {
            parser: Parser::new_from_str_with_options(text, options),
            peeked: None,
            depth: 0,
        }
    }

    fn next(&mut self) -> Result<Event<'a>, Error> {
        if let Some(event) = self.peeked.take() {
            return Ok(event);
        }
        match self.parser.next_event() {
            Some(Ok((event, _))) => checked(event),
            Some(Err(e)) => Err(Error(e.to_string())),
            None => refuse("unexpected end of the text"),
        }
    }

    fn peek(&mut self) -> Result<&Event<'a>, Error> {
        if self.peeked.is_none() {
            self.peeked = Some(self.next()?);
        }
        self.peeked
            .as_ref()
            .ok_or_else(|| Error("no event".to_string()))
    }

    fn enter(&mut self) -> Result<(), Error> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return refuse("nesting too deep");
        }
        Ok(())
    }

    /// Skips one node (a scalar, or a collection with everything in it).
    fn skip(&mut self) -> Result<(), Error> {
        let mut open = 0usize;
        loop {
            match self.next()? {
                Event::SequenceStart(..) | Event::MappingStart(..) => open += 1,
                Event::SequenceEnd | Event::MappingEnd => {
                    open = open
                        .checked_sub(1)
                        .ok_or_else(|| Error("unbalanced collection".to_string()))?;
                }
                Event::Scalar(..) => {}
                _ => return refuse("unexpected event in a node"),
            }
            if open == 0 {
                return Ok(());
            }
        }
    }
}

/// Refuses anchors, aliases and tags.
fn checked(event: Event<'_>) -> Result<Event<'_>, Error> {
    match &event {
        Event::Alias(_) | Event::Anchor(..) | Event::UnresolvedAlias(_) => {
            refuse("an anchor or alias")
        }
        Event::Scalar(_, _, anchor, tag)
        | Event::SequenceStart(_, anchor, tag)
        | Event::MappingStart(_, anchor, tag)
            if *anchor != 0 || tag.is_some() =>
        {
            refuse("an anchor or tag")
        }
        _ => Ok(event),
    }
}

/// What a plain scalar is in the YAML 1.2 core schema.
#[derive(Debug, PartialEq)]
enum Plain {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str,
    /// Read differently by YAML 1.1, or by options of the general path: refused.
    Unsure,
}

fn resolve(s: &str) -> Plain {
    match s {
        "" | "~" | "null" | "Null" | "NULL" => return Plain::Null,
        "true" | "True" | "TRUE" => return Plain::Bool(true),
        "false" | "False" | "FALSE" => return Plain::Bool(false),
        _ => {}
    }
    if matches!(
        s.to_ascii_lowercase().as_str(),
        "y" | "n" | "yes" | "no" | "on" | "off" | "null" | "true" | "false"
    ) {
        return Plain::Unsure;
    }
    let Some(first) = s.bytes().next() else {
        return Plain::Null;
    };
    if !(first.is_ascii_digit() || matches!(first, b'+' | b'-' | b'.')) {
        return Plain::Str;
    }
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        if digits.len() > 1 && digits.starts_with('0') {
            return Plain::Unsure;
        }
        return s.parse().map_or(Plain::Unsure, Plain::Int);
    }
    if is_float(digits)
        && !(digits.len() > 1 && digits.starts_with('0') && !digits.starts_with("0."))
    {
        return s.parse().map_or(Plain::Unsure, Plain::Float);
    }
    let lower = digits.to_ascii_lowercase();
    if lower.starts_with("0x")
        || lower.starts_with("0o")
        || lower.starts_with("0b")
        || matches!(lower.as_str(), ".inf" | ".nan")
        || (s.contains(['_', ':'])
            && s.bytes()
                .all(|b| b.is_ascii_digit() || b"+-._:eE".contains(&b)))
    {
        return Plain::Unsure;
    }
    Plain::Str
}

/// `(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?`
fn is_float(s: &str) -> bool {
    let (mantissa, exponent) = match s.find(['e', 'E']) {
        Some(i) => (&s[..i], Some(&s[i + 1..])),
        None => (s, None),
    };
    let mantissa_ok = match mantissa.split_once('.') {
        Some((int, frac)) => {
            int.bytes().all(|b| b.is_ascii_digit())
                && frac.bytes().all(|b| b.is_ascii_digit())
                && !(int.is_empty() && frac.is_empty())
        }
        None => !mantissa.is_empty() && mantissa.bytes().all(|b| b.is_ascii_digit()),
    };
    let exponent_ok = exponent.is_none_or(|e| {
        let e = e.strip_prefix(['+', '-']).unwrap_or(e);
        !e.is_empty() && e.bytes().all(|b| b.is_ascii_digit())
    });
    mantissa_ok && exponent_ok
}

fn visit_text<'a, V: Visitor<'a>>(text: Cow<'a, str>, visitor: V) -> Result<V::Value, Error> {
    match text {
        Cow::Borrowed(s) => visitor.visit_borrowed_str(s),
        Cow::Owned(s) => visitor.visit_string(s),
    }
}

impl<'de> Deserializer<'de> for &mut Events<'de> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.next()? {
            Event::Scalar(text, ScalarStyle::Plain, ..) => match resolve(&text) {
                Plain::Null => visitor.visit_unit(),
                Plain::Bool(b) => visitor.visit_bool(b),
                Plain::Int(i) => visitor.visit_i64(i),
                Plain::Float(f) => visitor.visit_f64(f),
                Plain::Str => visit_text(text, visitor),
                Plain::Unsure => refuse("a plain scalar of uncertain type"),
            },
            Event::Scalar(text, ..) => visit_text(text, visitor),
            Event::SequenceStart(..) => {
                self.enter()?;
                let mut access = Access {
                    events: self,
                    done: false,
                };
                let value = visitor.visit_seq(&mut access)?;
                if !access.done {
                    return refuse("a sequence not read to its end");
                }
                Ok(value)
            }
            Event::MappingStart(..) => {
                self.enter()?;
                let mut access = Access {
                    events: self,
                    done: false,
                };
                let value = visitor.visit_map(&mut access)?;
                if !access.done {
                    return refuse("a mapping not read to its end");
                }
                Ok(value)
            }
            _ => refuse("unexpected event"),
        }
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.next()? {
            Event::Scalar(text, ScalarStyle::Plain, ..) => match resolve(&text) {
                Plain::Str => visit_text(text, visitor),
                _ => refuse("a plain scalar that is not a string where a string is expected"),
            },
            Event::Scalar(text, ..) => visit_text(text, visitor),
            _ => refuse("a collection where a string is expected"),
        }
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_str(visitor)
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_str(visitor)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        if let Event::Scalar(text, ScalarStyle::Plain, ..) = self.peek()?
            && resolve(text) == Plain::Null
        {
            self.next()?;
            return visitor.visit_none();
        }
        visitor.visit_some(self)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.skip()?;
        visitor.visit_unit()
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        _visitor: V,
    ) -> Result<V::Value, Error> {
        refuse("an enum")
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char bytes byte_buf unit
        unit_struct seq tuple tuple_struct map struct
    }
}

/// The entries of a sequence or mapping being read.
struct Access<'r, 'a> {
    events: &'r mut Events<'a>,
    done: bool,
}

impl Access<'_, '_> {
    /// Whether the collection ends here (the end is then consumed).
    fn at_end(&mut self) -> Result<bool, Error> {
        if self.done {
            return Ok(true);
        }
        if matches!(self.events.peek()?, Event::SequenceEnd | Event::MappingEnd) {
            self.events.next()?;
            self.events.depth = self.events.depth.saturating_sub(1);
            self.done = true;
        }
        Ok(self.done)
    }
}

impl<'de> SeqAccess<'de> for &mut Access<'_, 'de> {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Error> {
        if self.at_end()? {
            return Ok(None);
        }
        seed.deserialize(&mut *self.events).map(Some)
    }
}

impl<'de> MapAccess<'de> for &mut Access<'_, 'de> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        if self.at_end()? {
            return Ok(None);
        }
        if let Event::Scalar(key, ScalarStyle::Plain, ..) = self.events.peek()?
            && key == "<<"
        {
            return refuse("a merge key");
        }
        seed.deserialize(&mut *self.events).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        seed.deserialize(&mut *self.events)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn values(text: &str) -> Result<Vec<Value>, Error> {
        documents::<Value>(text)
    }

    #[test]
    fn plain_scalars_are_typed_like_the_core_schema() {
        assert_eq!(resolve("null"), Plain::Null);
        assert_eq!(resolve("~"), Plain::Null);
        assert_eq!(resolve("True"), Plain::Bool(true));
        assert_eq!(resolve("-12"), Plain::Int(-12));
        assert_eq!(resolve("1.5e3"), Plain::Float(1500.0));
        assert_eq!(resolve(".5"), Plain::Float(0.5));
        assert_eq!(resolve("rendered-worker-1"), Plain::Str);
        assert_eq!(resolve("2024-02-07T16:09:53Z"), Plain::Str);
        assert_eq!(resolve("0/3 nodes are available"), Plain::Str);
        assert_eq!(resolve("10.0.0.1"), Plain::Str);
        assert_eq!(resolve("v1.27.6+f67aeb3"), Plain::Str);
        assert_eq!(resolve("1e"), Plain::Str);
        for unsure in [
            "yes", "No", "ON", "0x1F", "0o17", "0123", ".inf", "1_000", "12:30",
        ] {
            assert_eq!(resolve(unsure), Plain::Unsure, "{unsure}");
        }
    }

    #[test]
    fn reads_documents_like_the_general_path() {
        let text = "---\nkind: List\nitems:\n- metadata:\n    name: a\n    labels: {x: \"1\", z: ''}\n  spec: {unschedulable: true}\n  num: 7\n  f: 1.5\n  s: |\n    two\n    lines\n  q: \"esc\\taped\"\n- null\n---\n[1, two, ~]\n";
        let fast = values(text).expect("read");
        let general = crate::parse_documents(text).expect("general");
        assert_eq!(fast, general);
        assert_eq!(fast[1], json!([1, "two", null]));
    }

    #[test]
    fn every_fixture_file_reads_as_the_same_values() {
        let root = update_status_testdata::oc_status_dir();
        let mut compared = 0;
        for case in std::fs::read_dir(&root)
            .expect("fixtures")
            .filter_map(Result::ok)
        {
            let Ok(files) = std::fs::read_dir(case.path()) else {
                continue;
            };
            for file in files.filter_map(Result::ok) {
                let path = file.path();
                if path.extension().is_none_or(|e| e != "yaml") {
                    continue;
                }
                let text = std::fs::read_to_string(&path).expect("read");
                let general = crate::parse_documents(&text).expect("general");
                // The general path drops null documents; the fast path's Top does too.
                let fast: Vec<Value> = values(&text)
                    .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
                    .into_iter()
                    .filter(|v| !v.is_null())
                    .collect();
                assert_eq!(fast, general, "{}", path.display());
                compared += 1;
            }
        }
        assert!(compared >= 40, "{compared}");
    }

    #[test]
    fn refuses_what_it_does_not_read_like_the_general_path() {
        for text in [
            "a: &x 1\nb: *x\n",
            "a: !!str 1\n",
            "a: {<<: {b: 1}}\n",
            "a: yes\n",
            "a: [\n",
            "a: b: c\n",
        ] {
            assert!(values(text).is_err(), "{text}");
        }
        let deep = format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
        assert!(values(&deep).is_err());
        let fine = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert!(values(&fine).is_ok());
        // A plain scalar that is not a string, where a string is expected.
        assert!(documents::<std::collections::BTreeMap<String, String>>("a: true\n").is_err());
        assert!(documents::<std::collections::BTreeMap<String, String>>("a: 'true'\n").is_ok());
    }
}
