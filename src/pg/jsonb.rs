//! JSON at the SQL boundary: a body returned as `json` (its bytes exactly as the
//! compiler wrote them: `json` output copies text, it never re-serializes), jsonb
//! arguments read as their JSON text, jsonb columns read from their binary form, and jsonb
//! results built in it (`JsonbOut`).

use std::ffi::c_char;

use pgrx::callconv::{BoxRet, FcInfo};
use pgrx::datum::Datum;
use pgrx::pgrx_sql_entity_graph::metadata::{ArgumentError, ReturnsError, ReturnsRef, SqlMappingRef, SqlTranslatable};
use pgrx::{direct_function_call_as_datum, pg_sys, IntoDatum};

/// Names `$ty` to pgrx as the SQL type `$sql`, as an argument and as a result.
macro_rules! sql_type {
    ($ty:ident, $sql:literal) => {
        // SAFETY: `$ty`'s datum is read (FromDatum) or built (IntoDatum) as `$sql`, the
        // SQL type named here.
        unsafe impl SqlTranslatable for $ty {
            const TYPE_IDENT: &'static str = pgrx::pgrx_resolved_type!($ty);
            const TYPE_ORIGIN: pgrx::pgrx_sql_entity_graph::metadata::TypeOrigin =
                pgrx::pgrx_sql_entity_graph::metadata::TypeOrigin::External;
            const ARGUMENT_SQL: Result<SqlMappingRef, ArgumentError> = Ok(SqlMappingRef::literal($sql));
            const RETURN_SQL: Result<ReturnsRef, ReturnsError> = Ok(ReturnsRef::One(SqlMappingRef::literal($sql)));
        }
    };
}

/// Returns `$ty` from a function as its `into_datum` makes it.
macro_rules! result_type {
    ($ty:ident) => {
        // SAFETY: `box_into` returns a datum of the declared type (`$ty`'s SQL type, built
        // by its `into_datum` in the call's memory context) or SQL NULL.
        unsafe impl BoxRet for $ty {
            unsafe fn box_into<'fcx>(self, fcinfo: &mut FcInfo<'fcx>) -> Datum<'fcx> {
                match self.into_datum() {
                    // SAFETY: a varlena palloc'd in the current (the call's) memory context.
                    Some(datum) => unsafe { fcinfo.return_raw_datum(datum) },
                    None => fcinfo.return_null(),
                }
            }
        }
    };
}

/// Takes `$ty` as a function's argument through its `FromDatum`; NULL is a bug (the
/// functions are STRICT).
macro_rules! argument_type {
    ($ty:ident, $sql:literal) => {
        // SAFETY: the argument is read as the declared SQL type (`$sql`) and never
        // outlives the call.
        unsafe impl<'fcx> pgrx::callconv::ArgAbi<'fcx> for $ty {
            unsafe fn unbox_arg_unchecked(arg: pgrx::callconv::Arg<'_, 'fcx>) -> Self {
                // SAFETY: the caller guarantees `arg` is this function's `$sql` argument.
                unsafe { arg.unbox_arg_using_from_datum() }
                    .unwrap_or_else(|| pgrx::error!(concat!("pgprompt: a NULL ", $sql, " argument")))
            }
        }
    };
}

sql_type!(JsonBody, "json");
result_type!(JsonBody);
sql_type!(JsonbArg, "jsonb");
argument_type!(JsonbArg, "jsonb");
sql_type!(JsonArg, "json");
argument_type!(JsonArg, "json");
sql_type!(JsonbOut, "jsonb");
result_type!(JsonbOut);
sql_type!(JsonbDatum, "jsonb");
result_type!(JsonbDatum);

/// A `jsonb` result already built (`jsonb_ser::to_jsonb`); `None` is SQL NULL.
pub struct JsonbDatum(pub Option<pg_sys::Datum>);

impl IntoDatum for JsonbDatum {
    fn into_datum(self) -> Option<pg_sys::Datum> {
        self.0
    }

    fn type_oid() -> pg_sys::Oid {
        pg_sys::JSONBOID
    }
}

/// A body returned as `json`, written straight into its datum: one allocation, one copy
/// of each piece (joining the pieces into a String first was a second copy of
/// the whole body, and its allocation a page-faulted buffer, on every call).
pub struct JsonBody(pub pgprompt_core::Body);

/// PostgreSQL's largest allocation (`MaxAllocSize`), and so its largest text.
const MAX_ALLOC: usize = 0x3fff_ffff;

impl IntoDatum for JsonBody {
    fn into_datum(self) -> Option<pg_sys::Datum> {
        let body = self.0;
        let total = body.len() + pg_sys::VARHDRSZ;
        if total > MAX_ALLOC {
            super::errors::raise(
                pgprompt_core::Error::new(
                    pgprompt_core::Code::DocumentTooLarge,
                    format!(
                        "the body is {} bytes; PostgreSQL's limit for a value is 1 GB",
                        body.len()
                    ),
                )
                .hint("Give the model a window: history is trimmed to fit it."),
            );
        }
        let pieces = std::iter::once(body.head.as_bytes())
            .chain(body.elements.iter().enumerate().flat_map(|(i, e)| {
                let comma: &[u8] = if i == 0 { b"" } else { b"," };
                [comma, e.as_bytes()]
            }))
            .chain(std::iter::once(body.tail.as_bytes()));
        // SAFETY: palloc returns `total` writable bytes in the current memory context (or
        // raises); the header is set for that length, and the pieces written after it
        // add up to exactly `body.len()` bytes (`Body::len` counts the same pieces).
        unsafe {
            let ptr = pg_sys::palloc(total).cast::<u8>();
            pgrx::set_varsize_4b(ptr.cast(), total as i32);
            let mut at = pg_sys::VARHDRSZ;
            for piece in pieces {
                std::ptr::copy_nonoverlapping(piece.as_ptr(), ptr.add(at), piece.len());
                at += piece.len();
            }
            debug_assert_eq!(at, total);
            Some(pg_sys::Datum::from(ptr))
        }
    }

    fn type_oid() -> pg_sys::Oid {
        pg_sys::JSONOID
    }
}

/// A jsonb argument as its JSON text (through `jsonb_out`). Unlike pgrx's `JsonB`, a
/// value serde cannot rebuild (nested deeper than its recursion limit) is not a panic:
/// the caller parses the text and reports the problem.
pub struct JsonbArg(pub String);

impl pgrx::FromDatum for JsonbArg {
    unsafe fn from_polymorphic_datum(datum: pg_sys::Datum, is_null: bool, _: pg_sys::Oid) -> Option<Self> {
        if is_null {
            return None;
        }
        // SAFETY: `datum` is a non-NULL jsonb (the argument's declared type), which
        // jsonb_out turns into a palloc'd NUL-terminated string.
        let text = unsafe { direct_function_call_as_datum(pg_sys::jsonb_out, &[Some(datum)]) }?;
        // SAFETY: jsonb_out returned a valid C string, alive in the current context.
        let cstr = unsafe { std::ffi::CStr::from_ptr(text.cast_mut_ptr::<c_char>()) };
        Some(JsonbArg(cstr.to_string_lossy().into_owned()))
    }
}

/// A `json` argument as its text (`json` is stored as text: no parse, no re-serialization).
pub struct JsonArg(pub String);

impl pgrx::FromDatum for JsonArg {
    unsafe fn from_polymorphic_datum(datum: pg_sys::Datum, is_null: bool, oid: pg_sys::Oid) -> Option<Self> {
        // SAFETY: a `json` datum is a text varlena; String reads (and detoasts) it.
        unsafe { String::from_polymorphic_datum(datum, is_null, oid) }.map(JsonArg)
    }
}

/// How deep a jsonb value read into Rust may nest (serde_json's own limit, which the
/// write checks apply to rounds already).
const MAX_DEPTH: usize = 128;

/// A container being read: its values so far, and for an object the key waiting for
/// its value.
enum Frame {
    Array(Vec<serde_json::Value>, bool),
    Object(serde_json::Map<String, serde_json::Value>, Option<String>),
}

impl Frame {
    fn push(&mut self, value: serde_json::Value) {
        match self {
            Frame::Array(values, _) => values.push(value),
            Frame::Object(map, key) => {
                map.insert(key.take().unwrap_or_default(), value);
            }
        }
    }
}

/// An empty object or array stored in line, read from its root container's header
/// alone (`None`: anything else). Most of a turn's NOT NULL JSON columns hold their
/// default (`[]` or `{}`), and reading one through the iterator (a detoast, an iterator,
/// two guarded calls) was a tenth of reading a turn (bench/NOTES.md).
///
/// # Safety
/// `datum` must be a non-NULL `jsonb` datum, valid for the duration of the call.
unsafe fn empty_container(datum: pg_sys::Datum) -> Option<serde_json::Value> {
    use pgrx::varlena::{varatt_is_1b, varatt_is_1b_e, varatt_is_4b_c, varsize_any_exhdr};
    let p = datum.cast_mut_ptr::<pg_sys::varlena>();
    // SAFETY: a varlena (the caller's contract); only an in-line, uncompressed one is
    // read, and only the 4 bytes of its root header, which every jsonb has, just past
    // its 1- or 4-byte length (a raw pointer: pgrx's `vardata_any` would make a slice
    // reaching past a short value's end). A short value's header is unaligned.
    let header = unsafe {
        if varatt_is_1b_e(p) || varatt_is_4b_c(p) || varsize_any_exhdr(p) < 4 {
            return None;
        }
        let data = p.cast::<u8>().add(if varatt_is_1b(p) { 1 } else { 4 });
        std::ptr::read_unaligned(data.cast::<u32>())
    };
    if header & (pg_sys::JB_CMASK | pg_sys::JB_FSCALAR) != 0 {
        return None;
    }
    if header & pg_sys::JB_FOBJECT != 0 {
        Some(serde_json::Value::Object(serde_json::Map::new()))
    } else if header & pg_sys::JB_FARRAY != 0 {
        Some(serde_json::Value::Array(Vec::new()))
    } else {
        None
    }
}

/// A jsonb value read from its binary form, without writing it as text and parsing it
/// back (`jsonb_out` and serde's parse were most of reading a tool round). `None` for
/// a value nested deeper than [`MAX_DEPTH`].
///
/// # Safety
/// `datum` must be a non-NULL `jsonb` datum, valid for the duration of the call.
pub unsafe fn jsonb_value(datum: pg_sys::Datum) -> Option<serde_json::Value> {
    use pg_sys::JsonbIteratorToken::*;
    // SAFETY: per this function's contract.
    if let Some(empty) = unsafe { empty_container(datum) } {
        return Some(empty);
    }
    // SAFETY: the caller guarantees a jsonb datum; detoasting gives a full-header Jsonb
    // in the current memory context, whose root container the iterator walks.
    let jb = unsafe { pg_sys::pg_detoast_datum(datum.cast_mut_ptr()) }.cast::<pg_sys::Jsonb>();
    // SAFETY: `jb` points to a whole Jsonb (above).
    let mut it = unsafe { pg_sys::JsonbIteratorInit(&mut (*jb).root) };
    // SAFETY: a JsonbValue is plain data; JsonbIteratorNext fills it before each read.
    let mut v: pg_sys::JsonbValue = unsafe { std::mem::zeroed() };
    let mut stack: Vec<Frame> = Vec::new();
    loop {
        // SAFETY: `it` is the iterator JsonbIteratorInit made (or the next one it
        // handed back); it is freed by the iteration itself when it reaches WJB_DONE.
        let token = unsafe { pg_sys::JsonbIteratorNext(&mut it, &mut v, false) };
        let done = match token {
            WJB_BEGIN_ARRAY | WJB_BEGIN_OBJECT => {
                if stack.len() >= MAX_DEPTH {
                    return None;
                }
                stack.push(if token == WJB_BEGIN_ARRAY {
                    // SAFETY: for WJB_BEGIN_ARRAY the iterator sets `val.array`.
                    Frame::Array(Vec::new(), unsafe { v.val.array.rawScalar })
                } else {
                    Frame::Object(serde_json::Map::new(), None)
                });
                None
            }
            WJB_KEY => {
                // SAFETY: a key is a jbvString the iterator set.
                let key = unsafe { scalar(&v) };
                if let (Some(Frame::Object(_, pending)), serde_json::Value::String(k)) = (stack.last_mut(), key) {
                    *pending = Some(k);
                }
                None
            }
            WJB_VALUE | WJB_ELEM => {
                // SAFETY: for a scalar token the iterator set `v` to a scalar.
                let value = unsafe { scalar(&v) };
                stack.last_mut()?.push(value);
                None
            }
            WJB_END_ARRAY | WJB_END_OBJECT => {
                let value = match stack.pop()? {
                    Frame::Array(mut values, true) => values.pop().unwrap_or_default(),
                    Frame::Array(values, false) => serde_json::Value::Array(values),
                    Frame::Object(map, _) => serde_json::Value::Object(map),
                };
                match stack.last_mut() {
                    Some(parent) => {
                        parent.push(value);
                        None
                    }
                    None => Some(value),
                }
            }
            _ => return None,
        };
        if let Some(value) = done {
            // Finish the iteration so it frees what it holds.
            // SAFETY: as above; the next token is WJB_DONE.
            while unsafe { pg_sys::JsonbIteratorNext(&mut it, &mut v, false) } != WJB_DONE {}
            return Some(value);
        }
    }
}

/// A scalar jsonb value as JSON.
///
/// # Safety
/// `v` must be a scalar value the jsonb iterator set.
unsafe fn scalar(v: &pg_sys::JsonbValue) -> serde_json::Value {
    use pg_sys::jbvType;
    match v.type_ {
        // SAFETY: `type_` is jbvString, so `val.string` is the member set: a pointer to
        // `len` bytes of UTF-8 that live as long as the jsonb being iterated.
        jbvType::jbvString => unsafe {
            let s = v.val.string;
            let bytes = std::slice::from_raw_parts(s.val.cast::<u8>(), usize::try_from(s.len).unwrap_or(0));
            // Checked by `str::from_utf8`, which is several times faster than the lossy
            // reader on valid text (3.6% of a tool-round preview's samples, profiled
            // 2026-12-04); only a string that is not UTF-8 is read lossily.
            let text = match std::str::from_utf8(bytes) {
                Ok(valid) => valid.to_owned(),
                Err(_) => String::from_utf8_lossy(bytes).into_owned(),
            };
            serde_json::Value::String(text)
        },
        // SAFETY: `type_` is jbvBool, so `val.boolean` is the member set.
        jbvType::jbvBool => serde_json::Value::Bool(unsafe { v.val.boolean }),
        // SAFETY: `type_` is jbvNumeric, so `val.numeric` is a valid numeric datum, which
        // numeric_out spells as a palloc'd NUL-terminated string.
        jbvType::jbvNumeric => unsafe {
            let text = direct_function_call_as_datum(pg_sys::numeric_out, &[Some(pg_sys::Datum::from(v.val.numeric))]);
            text.map(|t| {
                std::ffi::CStr::from_ptr(t.cast_mut_ptr::<c_char>())
                    .to_string_lossy()
                    .into_owned()
            })
            .and_then(|t| serde_json::from_str::<serde_json::Number>(&t).ok())
            .map_or(serde_json::Value::Null, serde_json::Value::Number)
        },
        _ => serde_json::Value::Null,
    }
}

/// A `jsonb` result built in its binary form ([`super::jsonb_ser`]): not written as text
/// and parsed back, as pgrx's `JsonB` does (`jsonb_in`'s parse of `explain_turn`'s 0.43 MB
/// of messages was 13% of the call, and writing the text 5%; profiled 2026-12-04).
pub struct JsonbOut(pub serde_json::Value);

impl JsonbOut {
    /// The value built in jsonb's binary form; `None` for what goes through the text: a
    /// scalar (jsonb's raw-scalar form), or a value with a string jsonb cannot hold (too
    /// long, or with a NUL), whose parse then raises the error it deserves.
    pub fn binary(&self) -> Option<pg_sys::Datum> {
        super::jsonb_ser::binary(&self.0)
    }
}

impl IntoDatum for JsonbOut {
    fn into_datum(self) -> Option<pg_sys::Datum> {
        match self.binary() {
            Some(datum) => Some(datum),
            None => pgrx::JsonB(self.0).into_datum(),
        }
    }

    fn type_oid() -> pg_sys::Oid {
        pg_sys::JSONBOID
    }
}
