//! Results as jsonb, built directly from Rust values with `pushJsonbValue`: no JSON
//! text is written and none is parsed (profiling showed the text round trip through
//! `jsonb_in` to be most of a compile's cost).

use std::ffi::c_char;

use pgrx::callconv::{BoxRet, FcInfo};
use pgrx::datum::Datum;
use pgrx::pgrx_sql_entity_graph::metadata::{ArgumentError, ReturnsError, ReturnsRef, SqlMappingRef, SqlTranslatable};
use pgrx::{direct_function_call_as_datum, pg_sys, IntoDatum};
use serde::ser::{self, Serialize};

/// A jsonb datum, returned as `jsonb` (or passed to SPI as a jsonb parameter).
#[derive(Clone, Copy)]
pub struct Jsonb(pub pg_sys::Datum);

impl IntoDatum for Jsonb {
    fn into_datum(self) -> Option<pg_sys::Datum> {
        Some(self.0)
    }

    fn type_oid() -> pg_sys::Oid {
        pg_sys::JSONBOID
    }
}

unsafe impl BoxRet for Jsonb {
    unsafe fn box_into<'fcx>(self, fcinfo: &mut FcInfo<'fcx>) -> Datum<'fcx> {
        unsafe { fcinfo.return_raw_datum(self.0) }
    }
}

unsafe impl SqlTranslatable for Jsonb {
    const TYPE_IDENT: &'static str = pgrx::pgrx_resolved_type!(Jsonb);
    const TYPE_ORIGIN: pgrx::pgrx_sql_entity_graph::metadata::TypeOrigin =
        pgrx::pgrx_sql_entity_graph::metadata::TypeOrigin::External;
    const ARGUMENT_SQL: Result<SqlMappingRef, ArgumentError> = Ok(SqlMappingRef::literal("jsonb"));
    const RETURN_SQL: Result<ReturnsRef, ReturnsError> = Ok(ReturnsRef::One(SqlMappingRef::literal("jsonb")));
}

/// JSON text as jsonb, through `jsonb_in` (for text that was stored, not built).
pub fn from_text(text: &str) -> Jsonb {
    let cstring = std::ffi::CString::new(text).unwrap_or_else(|_| pgrx::error!("pgprompt: JSON text with a NUL byte"));
    let datum = unsafe { direct_function_call_as_datum(pg_sys::jsonb_in, &[Some(cstring.as_ptr().into())]) };
    Jsonb(datum.unwrap_or_else(|| pgrx::error!("pgprompt: jsonb_in returned NULL")))
}

/// Serializes `value` into a jsonb datum in the current memory context. The value's
/// outermost shape must be an object or an array.
pub fn to_jsonb<T: Serialize + ?Sized>(value: &T) -> Jsonb {
    let mut b = Builder {
        state: std::ptr::null_mut(),
        root: std::ptr::null_mut(),
        stack: Vec::new(),
    };
    if let Err(e) = value.serialize(&mut b) {
        pgrx::error!("pgprompt: could not build jsonb: {e}");
    }
    if b.root.is_null() {
        pgrx::error!("pgprompt: jsonb results are objects or arrays");
    }
    unsafe {
        let jsonb = pg_sys::JsonbValueToJsonb(b.root);
        Jsonb(pg_sys::Datum::from(jsonb))
    }
}

#[derive(Debug)]
pub struct Unsupported(String);

impl std::fmt::Display for Unsupported {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Unsupported {}

impl ser::Error for Unsupported {
    fn custom<T: std::fmt::Display>(msg: T) -> Self {
        Unsupported(msg.to_string())
    }
}

struct Builder {
    state: *mut pg_sys::JsonbParseState,
    root: *mut pg_sys::JsonbValue,
    /// Per open container: true for an object.
    stack: Vec<bool>,
}

type R = Result<(), Unsupported>;

impl Builder {
    fn push(&mut self, token: pg_sys::JsonbIteratorToken::Type, value: Option<pg_sys::JsonbValue>) {
        let mut v = value;
        let ptr = v.as_mut().map_or(std::ptr::null_mut(), |v| v as *mut _);
        let r = unsafe { pg_sys::pushJsonbValue(&mut self.state, token, ptr) };
        if matches!(
            token,
            pg_sys::JsonbIteratorToken::WJB_END_OBJECT | pg_sys::JsonbIteratorToken::WJB_END_ARRAY
        ) && self.stack.is_empty()
        {
            self.root = r;
        }
    }

    fn scalar(&mut self, v: pg_sys::JsonbValue) -> R {
        match self.stack.last() {
            Some(true) => self.push(pg_sys::JsonbIteratorToken::WJB_VALUE, Some(v)),
            Some(false) => self.push(pg_sys::JsonbIteratorToken::WJB_ELEM, Some(v)),
            None => return Err(Unsupported("a scalar at the top of a jsonb result".into())),
        }
        Ok(())
    }

    fn string(s: &str) -> pg_sys::JsonbValue {
        // The value must outlive the serializer's borrow: copy into the memory context.
        let len = s.len();
        let ptr = unsafe {
            let p = pg_sys::palloc(len.max(1)) as *mut c_char;
            std::ptr::copy_nonoverlapping(s.as_ptr() as *const c_char, p, len);
            p
        };
        let mut v = pg_sys::JsonbValue {
            type_: pg_sys::jbvType::jbvString,
            val: unsafe { std::mem::zeroed() },
        };
        v.val.string = pg_sys::JsonbValue__bindgen_ty_1__bindgen_ty_1 {
            len: len as i32,
            val: ptr,
        };
        v
    }

    fn numeric(n: pg_sys::Numeric) -> pg_sys::JsonbValue {
        let mut v = pg_sys::JsonbValue {
            type_: pg_sys::jbvType::jbvNumeric,
            val: unsafe { std::mem::zeroed() },
        };
        v.val.numeric = n;
        v
    }

    fn null() -> pg_sys::JsonbValue {
        pg_sys::JsonbValue {
            type_: pg_sys::jbvType::jbvNull,
            val: unsafe { std::mem::zeroed() },
        }
    }

    fn open(&mut self, object: bool) {
        self.stack.push(object);
        let token = if object {
            pg_sys::JsonbIteratorToken::WJB_BEGIN_OBJECT
        } else {
            pg_sys::JsonbIteratorToken::WJB_BEGIN_ARRAY
        };
        self.push(token, None);
    }

    fn close(&mut self) -> R {
        let object = self
            .stack
            .pop()
            .ok_or_else(|| Unsupported("unbalanced jsonb containers".into()))?;
        let token = if object {
            pg_sys::JsonbIteratorToken::WJB_END_OBJECT
        } else {
            pg_sys::JsonbIteratorToken::WJB_END_ARRAY
        };
        self.push(token, None);
        Ok(())
    }

    fn key(&mut self, k: &str) {
        self.push(pg_sys::JsonbIteratorToken::WJB_KEY, Some(Self::string(k)));
    }

    fn float(&mut self, f: pg_sys::Datum, func: unsafe fn(pg_sys::FunctionCallInfo) -> pg_sys::Datum) -> R {
        let n = unsafe { direct_function_call_as_datum(func, &[Some(f)]) }
            .ok_or_else(|| Unsupported("a float that is not a number".into()))?;
        self.scalar(Self::numeric(n.cast_mut_ptr()))
    }
}

/// Map keys: strings only.
struct KeySer<'a>(&'a mut Builder);

macro_rules! unsupported_key {
    ($($f:ident($t:ty)),*) => {$(
        fn $f(self, _: $t) -> R { Err(Unsupported("a jsonb object key must be a string".into())) }
    )*};
}

impl ser::Serializer for KeySer<'_> {
    type Ok = ();
    type Error = Unsupported;
    type SerializeSeq = ser::Impossible<(), Unsupported>;
    type SerializeTuple = ser::Impossible<(), Unsupported>;
    type SerializeTupleStruct = ser::Impossible<(), Unsupported>;
    type SerializeTupleVariant = ser::Impossible<(), Unsupported>;
    type SerializeMap = ser::Impossible<(), Unsupported>;
    type SerializeStruct = ser::Impossible<(), Unsupported>;
    type SerializeStructVariant = ser::Impossible<(), Unsupported>;

    fn serialize_str(self, v: &str) -> R {
        self.0.key(v);
        Ok(())
    }
    unsupported_key!(
        serialize_bool(bool),
        serialize_i8(i8),
        serialize_i16(i16),
        serialize_i32(i32),
        serialize_i64(i64),
        serialize_u8(u8),
        serialize_u16(u16),
        serialize_u32(u32),
        serialize_u64(u64),
        serialize_f32(f32),
        serialize_f64(f64),
        serialize_char(char),
        serialize_bytes(&[u8])
    );
    fn serialize_none(self) -> R {
        Err(Unsupported("a null object key".into()))
    }
    fn serialize_some<T: Serialize + ?Sized>(self, v: &T) -> R {
        v.serialize(self)
    }
    fn serialize_unit(self) -> R {
        Err(Unsupported("a unit object key".into()))
    }
    fn serialize_unit_struct(self, _: &'static str) -> R {
        Err(Unsupported("a unit object key".into()))
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, variant: &'static str) -> R {
        self.serialize_str(variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _: &'static str, v: &T) -> R {
        v.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(self, _: &'static str, _: u32, _: &'static str, _: &T) -> R {
        Err(Unsupported("a variant object key".into()))
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, Unsupported> {
        Err(Unsupported("a list object key".into()))
    }
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, Unsupported> {
        Err(Unsupported("a tuple object key".into()))
    }
    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeTupleStruct, Unsupported> {
        Err(Unsupported("a tuple object key".into()))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, Unsupported> {
        Err(Unsupported("a tuple object key".into()))
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, Unsupported> {
        Err(Unsupported("a map object key".into()))
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeStruct, Unsupported> {
        Err(Unsupported("a struct object key".into()))
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, Unsupported> {
        Err(Unsupported("a struct object key".into()))
    }
}

impl<'a> ser::Serializer for &'a mut Builder {
    type Ok = ();
    type Error = Unsupported;
    type SerializeSeq = Self;
    type SerializeTuple = Self;
    type SerializeTupleStruct = Self;
    type SerializeTupleVariant = Self;
    type SerializeMap = Self;
    type SerializeStruct = Self;
    type SerializeStructVariant = Self;

    fn serialize_bool(self, v: bool) -> R {
        let mut jv = pg_sys::JsonbValue {
            type_: pg_sys::jbvType::jbvBool,
            val: unsafe { std::mem::zeroed() },
        };
        jv.val.boolean = v;
        self.scalar(jv)
    }
    fn serialize_i8(self, v: i8) -> R {
        self.serialize_i64(v.into())
    }
    fn serialize_i16(self, v: i16) -> R {
        self.serialize_i64(v.into())
    }
    fn serialize_i32(self, v: i32) -> R {
        self.serialize_i64(v.into())
    }
    fn serialize_i64(self, v: i64) -> R {
        let n = unsafe { pg_sys::int64_to_numeric(v) };
        self.scalar(Builder::numeric(n))
    }
    fn serialize_u8(self, v: u8) -> R {
        self.serialize_i64(v.into())
    }
    fn serialize_u16(self, v: u16) -> R {
        self.serialize_i64(v.into())
    }
    fn serialize_u32(self, v: u32) -> R {
        self.serialize_i64(v.into())
    }
    fn serialize_u64(self, v: u64) -> R {
        match i64::try_from(v) {
            Ok(v) => self.serialize_i64(v),
            Err(_) => self.serialize_f64(v as f64),
        }
    }
    fn serialize_f32(self, v: f32) -> R {
        // float4_numeric keeps the shortest decimal of the float4 (0.1, not 0.100000001).
        let d = v.into_datum().ok_or_else(|| Unsupported("float4".into()))?;
        self.float(d, pg_sys::float4_numeric)
    }
    fn serialize_f64(self, v: f64) -> R {
        let d = v.into_datum().ok_or_else(|| Unsupported("float8".into()))?;
        self.float(d, pg_sys::float8_numeric)
    }
    fn serialize_char(self, v: char) -> R {
        self.serialize_str(v.encode_utf8(&mut [0; 4]))
    }
    fn serialize_str(self, v: &str) -> R {
        self.scalar(Builder::string(v))
    }
    fn serialize_bytes(self, _: &[u8]) -> R {
        Err(Unsupported("bytes".into()))
    }
    fn serialize_none(self) -> R {
        self.scalar(Builder::null())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, v: &T) -> R {
        v.serialize(self)
    }
    fn serialize_unit(self) -> R {
        self.scalar(Builder::null())
    }
    fn serialize_unit_struct(self, _: &'static str) -> R {
        self.scalar(Builder::null())
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, variant: &'static str) -> R {
        self.serialize_str(variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _: &'static str, v: &T) -> R {
        v.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        v: &T,
    ) -> R {
        self.open(true);
        self.key(variant);
        v.serialize(&mut *self)?;
        self.close()
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self, Unsupported> {
        self.open(false);
        Ok(self)
    }
    fn serialize_tuple(self, _: usize) -> Result<Self, Unsupported> {
        self.open(false);
        Ok(self)
    }
    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Self, Unsupported> {
        self.open(false);
        Ok(self)
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Self, Unsupported> {
        self.open(true);
        self.key(variant);
        self.open(false);
        Ok(self)
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self, Unsupported> {
        self.open(true);
        Ok(self)
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self, Unsupported> {
        self.open(true);
        Ok(self)
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Self, Unsupported> {
        self.open(true);
        self.key(variant);
        self.open(true);
        Ok(self)
    }
}

/// The list-like containers: each element is a value; `closes` containers end at once
/// (a tuple variant also closes the object naming it).
macro_rules! list_container {
    ($trait:ident, $method:ident, $closes:literal) => {
        impl ser::$trait for &mut Builder {
            type Ok = ();
            type Error = Unsupported;
            fn $method<T: Serialize + ?Sized>(&mut self, v: &T) -> R {
                v.serialize(&mut **self)
            }
            fn end(self) -> R {
                for _ in 0..$closes {
                    self.close()?;
                }
                Ok(())
            }
        }
    };
}

list_container!(SerializeSeq, serialize_element, 1);
list_container!(SerializeTuple, serialize_element, 1);
list_container!(SerializeTupleStruct, serialize_field, 1);
list_container!(SerializeTupleVariant, serialize_field, 2);

impl ser::SerializeMap for &mut Builder {
    type Ok = ();
    type Error = Unsupported;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, k: &T) -> R {
        k.serialize(KeySer(self))
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, v: &T) -> R {
        v.serialize(&mut **self)
    }
    fn end(self) -> R {
        self.close()
    }
}

/// The keyed containers: a struct's fields are keys; a struct variant also closes the
/// object naming it.
macro_rules! struct_container {
    ($trait:ident, $closes:literal) => {
        impl ser::$trait for &mut Builder {
            type Ok = ();
            type Error = Unsupported;
            fn serialize_field<T: Serialize + ?Sized>(&mut self, key: &'static str, v: &T) -> R {
                self.key(key);
                v.serialize(&mut **self)
            }
            fn end(self) -> R {
                for _ in 0..$closes {
                    self.close()?;
                }
                Ok(())
            }
        }
    };
}

struct_container!(SerializeStruct, 1);
struct_container!(SerializeStructVariant, 2);

/// A jsonb argument as its JSON text (through `jsonb_out`). Unlike pgrx's `JsonB`, a
/// value serde cannot rebuild (nested deeper than its recursion limit) is not a panic:
/// the caller parses the text and reports the problem.
pub struct JsonbArg(pub String);

impl pgrx::FromDatum for JsonbArg {
    unsafe fn from_polymorphic_datum(datum: pg_sys::Datum, is_null: bool, _: pg_sys::Oid) -> Option<Self> {
        if is_null {
            return None;
        }
        let text = unsafe { direct_function_call_as_datum(pg_sys::jsonb_out, &[Some(datum)]) }?;
        let cstr = unsafe { std::ffi::CStr::from_ptr(text.cast_mut_ptr::<c_char>()) };
        Some(JsonbArg(cstr.to_string_lossy().into_owned()))
    }
}

unsafe impl<'fcx> pgrx::callconv::ArgAbi<'fcx> for JsonbArg {
    unsafe fn unbox_arg_unchecked(arg: pgrx::callconv::Arg<'_, 'fcx>) -> Self {
        unsafe { arg.unbox_arg_using_from_datum() }.unwrap_or_else(|| pgrx::error!("pgprompt: a NULL jsonb argument"))
    }
}

unsafe impl SqlTranslatable for JsonbArg {
    const TYPE_IDENT: &'static str = pgrx::pgrx_resolved_type!(JsonbArg);
    const TYPE_ORIGIN: pgrx::pgrx_sql_entity_graph::metadata::TypeOrigin =
        pgrx::pgrx_sql_entity_graph::metadata::TypeOrigin::External;
    const ARGUMENT_SQL: Result<SqlMappingRef, ArgumentError> = Ok(SqlMappingRef::literal("jsonb"));
    const RETURN_SQL: Result<ReturnsRef, ReturnsError> = Ok(ReturnsRef::One(SqlMappingRef::literal("jsonb")));
}
