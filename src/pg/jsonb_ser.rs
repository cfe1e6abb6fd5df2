//! A `jsonb` result serialized straight into jsonb's binary form (`pushJsonbValue`), with
//! no `serde_json::Value` between: `explain_turn`'s 0.43 MB of messages were copied into a
//! `Value` tree and then walked again (4% of a call, profiled 2026-12-06). What the builder
//! cannot hold (a top-level scalar, a string jsonb refuses, a 128-bit integer) goes the
//! `Value` way instead ([`super::jsonb::JsonbOut`]), which raises what it deserves. A
//! `RawValue` (a tool call's input, a provider's recorded block) is its JSON, as
//! `serde_json::to_value` reads it.

use pgrx::pg_sys;
use pgrx::pg_sys::JsonbIteratorToken::{
    WJB_BEGIN_ARRAY, WJB_BEGIN_OBJECT, WJB_ELEM, WJB_END_ARRAY, WJB_END_OBJECT, WJB_KEY, WJB_VALUE,
};
use serde::ser::{self, Serialize};

use super::jsonb::{number_value, string_value, JsonbOut};

/// `value` as a jsonb datum, built in place; through a `serde_json::Value` where the
/// builder cannot hold it.
pub fn to_jsonb<T: Serialize>(value: &T) -> Option<pg_sys::Datum> {
    let mut builder = Builder {
        state: std::ptr::null_mut(),
        open: Vec::new(),
        strings: Vec::new(),
        root: None,
    };
    if value.serialize(&mut builder).is_ok() {
        if let Some(root) = builder.root {
            // SAFETY: `root` is the finished top-level container pushJsonbValue returned;
            // every string it points at is in `builder.strings` or 'static, alive here.
            return Some(pg_sys::Datum::from(unsafe { pg_sys::JsonbValueToJsonb(root) }));
        }
    }
    pgrx::IntoDatum::into_datum(JsonbOut(serde_json::to_value(value).unwrap_or(serde_json::Value::Null)))
}

/// What the builder cannot hold: the caller goes the `Value` way.
#[derive(Debug)]
pub struct Unheld;

impl std::fmt::Display for Unheld {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a value jsonb's builder does not hold")
    }
}

impl std::error::Error for Unheld {}

impl ser::Error for Unheld {
    fn custom<T: std::fmt::Display>(_: T) -> Self {
        Unheld
    }
}

/// The parse state, the containers open, the strings its values point at (each boxed, so
/// its bytes stay where they are), and the finished top.
struct Builder {
    state: *mut pg_sys::JsonbParseState,
    open: Vec<Open>,
    strings: Vec<Box<str>>,
    root: Option<*mut pg_sys::JsonbValue>,
}

/// A container being serialized: a jsonb object or array, or serde_json's `RawValue`
/// (a struct by a private name whose one field is its JSON text), which opens none:
/// its text is read and serialized in its place, as `serde_json::to_value` does.
#[derive(Clone, Copy, PartialEq)]
enum Open {
    Object,
    Array,
    Raw,
}

/// The name serde_json's `RawValue` serializes as (serde_json's `RawValue` impl).
const RAW_VALUE: &str = "$serde_json::private::RawValue";

type Done = Result<(), Unheld>;

impl Builder {
    /// A scalar where the open container takes one: an element or a member's value.
    fn scalar(&mut self, mut v: pg_sys::JsonbValue) -> Done {
        let token = match self.open.iter().rev().find(|o| **o != Open::Raw) {
            Some(Open::Object) => WJB_VALUE,
            Some(_) => WJB_ELEM,
            None => return Err(Unheld),
        };
        // SAFETY: the builder's own state, and a fully set scalar whose string (if any)
        // lives in `self.strings` or is 'static.
        unsafe { pg_sys::pushJsonbValue(&mut self.state, token, &mut v) };
        Ok(())
    }

    fn string(&mut self, s: &str) -> Done {
        let kept: Box<str> = s.into();
        let v = string_value(&kept).ok_or(Unheld)?;
        self.strings.push(kept);
        self.scalar(v)
    }

    fn key(&mut self, k: &str) -> Done {
        let kept: Box<str> = k.into();
        let mut v = string_value(&kept).ok_or(Unheld)?;
        self.strings.push(kept);
        // SAFETY: as in `scalar`; a key inside the open object.
        unsafe { pg_sys::pushJsonbValue(&mut self.state, WJB_KEY, &mut v) };
        Ok(())
    }

    fn number(&mut self, n: serde_json::Number) -> Done {
        let v = number_value(&n).ok_or(Unheld)?;
        self.scalar(v)
    }

    fn null(&mut self) -> Done {
        // SAFETY: a JsonbValue is plain data; a null needs its type alone.
        let mut v: pg_sys::JsonbValue = unsafe { std::mem::zeroed() };
        v.type_ = pg_sys::jbvType::jbvNull;
        self.scalar(v)
    }

    fn begin(&mut self, object: bool) -> Done {
        let token = if object { WJB_BEGIN_OBJECT } else { WJB_BEGIN_ARRAY };
        // SAFETY: a container begins with no value.
        unsafe { pg_sys::pushJsonbValue(&mut self.state, token, std::ptr::null_mut()) };
        self.open.push(if object { Open::Object } else { Open::Array });
        Ok(())
    }

    /// A struct's field: a member of its object, or a `RawValue`'s JSON text, read and
    /// serialized where the `RawValue` stands.
    fn field<T: ?Sized + Serialize>(&mut self, key: &'static str, value: &T) -> Done {
        if self.open.last() != Some(&Open::Raw) {
            self.key(key)?;
            return value.serialize(self);
        }
        let text = match serde_json::to_value(value).map_err(|_| Unheld)? {
            serde_json::Value::String(text) => text,
            _ => return Err(Unheld),
        };
        let parsed: serde_json::Value = serde_json::from_str(&text).map_err(|_| Unheld)?;
        parsed.serialize(self)
    }

    fn end(&mut self) -> Done {
        let token = match self.open.pop().ok_or(Unheld)? {
            Open::Object => WJB_END_OBJECT,
            Open::Array => WJB_END_ARRAY,
            Open::Raw => return Ok(()),
        };
        // SAFETY: the container begun last ends, with no value.
        let top = unsafe { pg_sys::pushJsonbValue(&mut self.state, token, std::ptr::null_mut()) };
        if self.open.is_empty() {
            self.root = Some(top);
        }
        Ok(())
    }
}

impl<'b> ser::Serializer for &'b mut Builder {
    type Ok = ();
    type Error = Unheld;
    type SerializeSeq = &'b mut Builder;
    type SerializeTuple = &'b mut Builder;
    type SerializeTupleStruct = &'b mut Builder;
    type SerializeTupleVariant = Variant<'b>;
    type SerializeMap = &'b mut Builder;
    type SerializeStruct = &'b mut Builder;
    type SerializeStructVariant = Variant<'b>;

    fn serialize_bool(self, b: bool) -> Done {
        // SAFETY: a JsonbValue is plain data; a boolean's member is set next.
        let mut v: pg_sys::JsonbValue = unsafe { std::mem::zeroed() };
        v.type_ = pg_sys::jbvType::jbvBool;
        v.val.boolean = b;
        self.scalar(v)
    }
    fn serialize_i8(self, n: i8) -> Done {
        self.number(n.into())
    }
    fn serialize_i16(self, n: i16) -> Done {
        self.number(n.into())
    }
    fn serialize_i32(self, n: i32) -> Done {
        self.number(n.into())
    }
    fn serialize_i64(self, n: i64) -> Done {
        self.number(n.into())
    }
    fn serialize_u8(self, n: u8) -> Done {
        self.number(n.into())
    }
    fn serialize_u16(self, n: u16) -> Done {
        self.number(n.into())
    }
    fn serialize_u32(self, n: u32) -> Done {
        self.number(n.into())
    }
    fn serialize_u64(self, n: u64) -> Done {
        self.number(n.into())
    }
    fn serialize_f32(self, n: f32) -> Done {
        self.serialize_f64(f64::from(n))
    }
    fn serialize_f64(self, n: f64) -> Done {
        // As serde_json's Value: a number that is not finite is null.
        match serde_json::Number::from_f64(n) {
            Some(n) => self.number(n),
            None => self.null(),
        }
    }
    fn serialize_char(self, c: char) -> Done {
        self.string(c.encode_utf8(&mut [0; 4]))
    }
    fn serialize_str(self, s: &str) -> Done {
        self.string(s)
    }
    fn serialize_bytes(self, bytes: &[u8]) -> Done {
        self.begin(false)?;
        for b in bytes {
            self.number((*b).into())?;
        }
        self.end()
    }
    fn serialize_none(self) -> Done {
        self.null()
    }
    fn serialize_some<T: ?Sized + Serialize>(self, value: &T) -> Done {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Done {
        self.null()
    }
    fn serialize_unit_struct(self, _: &'static str) -> Done {
        self.null()
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, variant: &'static str) -> Done {
        self.string(variant)
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(self, _: &'static str, value: &T) -> Done {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        value: &T,
    ) -> Done {
        self.begin(true)?;
        self.key(variant)?;
        value.serialize(&mut *self)?;
        self.end()
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, Unheld> {
        self.begin(false)?;
        Ok(self)
    }
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, Unheld> {
        self.begin(false)?;
        Ok(self)
    }
    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeTupleStruct, Unheld> {
        self.begin(false)?;
        Ok(self)
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, Unheld> {
        self.begin(true)?;
        self.key(variant)?;
        self.begin(false)?;
        Ok(Variant(self))
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, Unheld> {
        self.begin(true)?;
        Ok(self)
    }
    fn serialize_struct(self, name: &'static str, _: usize) -> Result<Self::SerializeStruct, Unheld> {
        match name {
            RAW_VALUE => self.open.push(Open::Raw),
            _ => self.begin(true)?,
        }
        Ok(self)
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, Unheld> {
        self.begin(true)?;
        self.key(variant)?;
        self.begin(true)?;
        Ok(Variant(self))
    }
}

impl ser::SerializeSeq for &mut Builder {
    type Ok = ();
    type Error = Unheld;
    fn serialize_element<T: ?Sized + Serialize>(&mut self, value: &T) -> Done {
        value.serialize(&mut **self)
    }
    fn end(self) -> Done {
        Builder::end(self)
    }
}

impl ser::SerializeTuple for &mut Builder {
    type Ok = ();
    type Error = Unheld;
    fn serialize_element<T: ?Sized + Serialize>(&mut self, value: &T) -> Done {
        value.serialize(&mut **self)
    }
    fn end(self) -> Done {
        Builder::end(self)
    }
}

impl ser::SerializeTupleStruct for &mut Builder {
    type Ok = ();
    type Error = Unheld;
    fn serialize_field<T: ?Sized + Serialize>(&mut self, value: &T) -> Done {
        value.serialize(&mut **self)
    }
    fn end(self) -> Done {
        Builder::end(self)
    }
}

impl ser::SerializeMap for &mut Builder {
    type Ok = ();
    type Error = Unheld;
    fn serialize_key<T: ?Sized + Serialize>(&mut self, key: &T) -> Done {
        // A key is a string, as serde_json's Value takes it (a number or a bool as its text).
        let text = match serde_json::to_value(key).map_err(|_| Unheld)? {
            serde_json::Value::String(s) => s,
            serde_json::Value::Number(n) => n.to_string(),
            serde_json::Value::Bool(b) => b.to_string(),
            _ => return Err(Unheld),
        };
        self.key(&text)
    }
    fn serialize_value<T: ?Sized + Serialize>(&mut self, value: &T) -> Done {
        value.serialize(&mut **self)
    }
    fn end(self) -> Done {
        Builder::end(self)
    }
}

impl ser::SerializeStruct for &mut Builder {
    type Ok = ();
    type Error = Unheld;
    fn serialize_field<T: ?Sized + Serialize>(&mut self, key: &'static str, value: &T) -> Done {
        self.field(key, value)
    }
    fn end(self) -> Done {
        Builder::end(self)
    }
}

/// An enum variant holding a tuple or a struct: `{"Variant": [..]}` or `{"Variant": {..}}`,
/// two containers to end.
pub struct Variant<'b>(&'b mut Builder);

impl ser::SerializeTupleVariant for Variant<'_> {
    type Ok = ();
    type Error = Unheld;
    fn serialize_field<T: ?Sized + Serialize>(&mut self, value: &T) -> Done {
        value.serialize(&mut *self.0)
    }
    fn end(self) -> Done {
        self.0.end()?;
        self.0.end()
    }
}

impl ser::SerializeStructVariant for Variant<'_> {
    type Ok = ();
    type Error = Unheld;
    fn serialize_field<T: ?Sized + Serialize>(&mut self, key: &'static str, value: &T) -> Done {
        self.0.field(key, value)
    }
    fn end(self) -> Done {
        self.0.end()?;
        self.0.end()
    }
}
