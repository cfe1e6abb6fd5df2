//! A `jsonb` result serialized straight into jsonb's binary form, with no
//! `serde_json::Value` and no `JsonbValue` tree between: `explain_turn`'s 0.43 MB of
//! messages were copied into a `Value` tree and walked again (4% of a call, profiled
//! 2026-12-06), then `pushJsonbValue` and `JsonbValueToJsonb` cost a fifth of a warm
//! `preview_turn` more (profiled the same day). The values are gathered as a tree whose
//! strings stay in the builder's chunks, each object's keys sorted as jsonb sorts them,
//! then written once into one allocation of the size a first pass measured: byte for
//! byte what `jsonb_in` writes for the same values (`convertToJsonb`'s layout: a
//! container's header, its entries with an offset every 32nd, keys before values, a
//! number or a container aligned to four bytes; checked against `jsonb_in` by the
//! `#[pg_test]` `jsonb_results_are_the_bytes_jsonb_in_writes`). What the builder does not
//! hold (a top-level scalar, a string jsonb refuses, a key twice, a 128-bit integer) goes
//! through its JSON text instead, whose parse raises what it deserves. A `RawValue` (a
//! tool call's input, a provider's recorded block) is its JSON as `serde_json::to_value`
//! reads it, as before this writer: its numbers as serde_json reads them (`1.00` as
//! `1.0`, an integer past 64 bits as a float); one serde_json cannot read (a number past
//! `f64`) sends the document through its text, which keeps it as written.

use pgrx::pg_sys;
use serde::ser::{self, Serialize};

/// `value` as a jsonb datum, built in place; through its JSON text where the builder
/// cannot hold it (`jsonb_in` reads it, and raises what it deserves: a `\u0000`).
pub fn to_jsonb<T: Serialize>(value: &T) -> Option<pg_sys::Datum> {
    binary(value).or_else(|| {
        let text = serde_json::to_string(value)
            .ok()
            .and_then(|t| std::ffi::CString::new(t).ok())
            .unwrap_or_else(|| pgrx::error!("pgprompt: internal error: a jsonb result has no JSON text"));
        // SAFETY: jsonb_in reads a NUL-terminated JSON text and returns a fresh jsonb.
        unsafe { pgrx::direct_function_call_as_datum(pg_sys::jsonb_in, &[Some(pg_sys::Datum::from(text.as_ptr()))]) }
    })
}

/// `value` in jsonb's binary form; `None` for what the builder does not hold.
pub fn binary<T: Serialize + ?Sized>(value: &T) -> Option<pg_sys::Datum> {
    let mut builder = Builder {
        open: Vec::new(),
        strings: Vec::new(),
        root: None,
    };
    value.serialize(&mut builder).ok()?;
    let root = builder.root.take()?;
    // Every string the tree points at is in `builder.strings`, alive here.
    written(&root).ok().map(pg_sys::Datum::from)
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

/// Bytes the builder holds (a string in its chunks, a palloc'd numeric): where and how
/// long.
#[derive(Clone, Copy)]
struct Held(*const u8, usize);

impl Held {
    fn bytes(&self) -> &[u8] {
        // SAFETY: a `Held` points into the builder's chunks (which never move, never
        // drop before the tree is written) or at a numeric palloc'd in the current
        // memory context, `self.1` bytes long; an empty one points at a real byte.
        unsafe { std::slice::from_raw_parts(self.0, self.1) }
    }
}

/// A value as gathered, before it is written.
enum Node {
    String(Held),
    /// A numeric varlena, whole.
    Number(Held),
    Bool(bool),
    Null,
    Array(Vec<Node>),
    /// Its members, sorted as jsonb sorts keys (shorter first, then bytewise).
    Object(Vec<(Held, Node)>),
}

/// The containers open, the strings the values point at (in chunks that never grow past
/// their capacity, so their bytes stay where they are), and the finished top.
struct Builder {
    open: Vec<Open>,
    strings: Vec<String>,
    root: Option<Node>,
}

/// A container being serialized: a jsonb object (its members so far, and the key whose
/// value comes next) or array, or serde_json's `RawValue` (a struct by a private name
/// whose one field is its JSON text), which opens none: its text is read and serialized
/// in its place, as `serde_json::to_value` does.
enum Open {
    Object(Vec<(Held, Node)>, Option<Held>),
    Array(Vec<Node>),
    Raw,
}

/// The name serde_json's `RawValue` serializes as (serde_json's `RawValue` impl).
const RAW_VALUE: &str = "$serde_json::private::RawValue";

type Done = Result<(), Unheld>;

impl Builder {
    /// A value where the open container takes one: an element, or the value of the key
    /// before it; the top when nothing is open (a container: jsonb's top-level scalar is
    /// left to the `Value` way).
    fn put(&mut self, node: Node) -> Done {
        let top = self.open.is_empty();
        match self.open.iter_mut().rev().find(|o| !matches!(o, Open::Raw)) {
            Some(Open::Array(items)) => items.push(node),
            Some(Open::Object(members, key)) => members.push((key.take().ok_or(Unheld)?, node)),
            Some(Open::Raw) => return Err(Unheld),
            None if top && matches!(node, Node::Array(_) | Node::Object(_)) => {
                self.root = Some(node);
            }
            None => return Err(Unheld),
        }
        Ok(())
    }

    fn string(&mut self, s: &str) -> Done {
        let held = self.stash(s)?;
        self.put(Node::String(held))
    }

    fn key(&mut self, k: &str) -> Done {
        let held = self.stash(k)?;
        self.put_key(held)
    }

    /// A field's name: 'static, pointed at where it is.
    fn static_key(&mut self, k: &'static str) -> Done {
        self.put_key(checked(k)?)
    }

    fn put_key(&mut self, k: Held) -> Done {
        match self.open.iter_mut().rev().find(|o| !matches!(o, Open::Raw)) {
            Some(Open::Object(_, key @ None)) => {
                *key = Some(k);
                Ok(())
            }
            _ => Err(Unheld),
        }
    }

    /// `s` copied where it stays until the builder is dropped: appended to the last chunk
    /// where it has room (a chunk never grows past its capacity, so nothing moves), else
    /// to a new one.
    fn stash(&mut self, s: &str) -> Result<Held, Unheld> {
        const CHUNK: usize = 64 * 1024;
        checked(s)?;
        let room = self.strings.last().is_some_and(|c| c.capacity() - c.len() >= s.len());
        if !room {
            self.strings.push(String::with_capacity(CHUNK.max(s.len())));
        }
        let chunk = self.strings.last_mut().ok_or(Unheld)?;
        let start = chunk.len();
        chunk.push_str(s);
        checked(&chunk[start..])
    }

    /// A number, through `numeric_in` as jsonb_in reads it.
    fn number(&mut self, n: serde_json::Number) -> Done {
        let text = std::ffi::CString::new(n.to_string()).map_err(|_| Unheld)?;
        // SAFETY: numeric_in reads a NUL-terminated spelling of a number (serde_json's
        // own, which numeric_in takes) and returns a numeric palloc'd in the current
        // memory context.
        let numeric = unsafe {
            pgrx::direct_function_call_as_datum(
                pg_sys::numeric_in,
                &[
                    Some(pg_sys::Datum::from(text.as_ptr())),
                    Some(pg_sys::Datum::from(pg_sys::InvalidOid)),
                    Some(pg_sys::Datum::from(-1i32)),
                ],
            )
        }
        .ok_or(Unheld)?
        .cast_mut_ptr::<pg_sys::varlena>();
        // SAFETY: a whole varlena, as numeric_in returned it.
        let len = unsafe { pgrx::varsize_any(numeric) };
        self.put(Node::Number(Held(numeric.cast::<u8>(), len)))
    }

    fn null(&mut self) -> Done {
        self.put(Node::Null)
    }

    fn begin(&mut self, object: bool) -> Done {
        self.open.push(match object {
            true => Open::Object(Vec::new(), None),
            false => Open::Array(Vec::new()),
        });
        Ok(())
    }

    /// A struct's field: a member of its object, or a `RawValue`'s JSON text, read and
    /// serialized where the `RawValue` stands.
    fn field<T: ?Sized + Serialize>(&mut self, key: &'static str, value: &T) -> Done {
        if !matches!(self.open.last(), Some(Open::Raw)) {
            self.static_key(key)?;
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
        match self.open.pop().ok_or(Unheld)? {
            Open::Raw => Ok(()),
            Open::Array(items) => self.put(Node::Array(items)),
            Open::Object(_, Some(_)) => Err(Unheld),
            Open::Object(mut members, None) => {
                members.sort_by(|a, b| jsonb_key_order(a.0.bytes(), b.0.bytes()));
                // A key twice: jsonb keeps the last; the `Value` way says so.
                if members.windows(2).any(|w| w[0].0.bytes() == w[1].0.bytes()) {
                    return Err(Unheld);
                }
                self.put(Node::Object(members))
            }
        }
    }
}

/// A string jsonb holds (not longer than an entry can say, no NUL: jsonb_in refuses
/// `\u0000`), pointed at where it is; an empty one at a real byte.
fn checked(s: &str) -> Result<Held, Unheld> {
    static EMPTY: u8 = 0;
    if s.len() > MAX_JSONB_STRING || s.contains('\0') {
        return Err(Unheld);
    }
    let at = if s.is_empty() { &raw const EMPTY } else { s.as_ptr() };
    Ok(Held(at, s.len()))
}

/// jsonb's order of an object's keys (`lengthCompareJsonbString`): the shorter first,
/// then bytewise.
fn jsonb_key_order(a: &[u8], b: &[u8]) -> std::cmp::Ordering {
    a.len().cmp(&b.len()).then_with(|| a.cmp(b))
}

// jsonb's binary layout (PostgreSQL's utils/jsonb.h; the on-disk format pg_upgrade keeps).
/// The longest string a jsonb value can hold.
const MAX_JSONB_STRING: usize = JENTRY_OFFLENMASK as usize;
const JENTRY_OFFLENMASK: u32 = 0x0FFF_FFFF;
const JENTRY_TYPEMASK: u32 = 0x7000_0000;
const JENTRY_HAS_OFF: u32 = 0x8000_0000;
const JENTRY_ISNUMERIC: u32 = 0x1000_0000;
const JENTRY_ISBOOL_FALSE: u32 = 0x2000_0000;
const JENTRY_ISBOOL_TRUE: u32 = 0x3000_0000;
const JENTRY_ISNULL: u32 = 0x4000_0000;
const JENTRY_ISCONTAINER: u32 = 0x5000_0000;
const JB_OFFSET_STRIDE: usize = 32;
const JB_CMASK: usize = 0x0FFF_FFFF;
const JB_FOBJECT: u32 = 0x2000_0000;
const JB_FARRAY: u32 = 0x4000_0000;

/// `root` written as a jsonb varlena: measured first, then written into one palloc of
/// that size. `Unheld` past what jsonb's entries can say.
fn written(root: &Node) -> Result<*mut pg_sys::varlena, Unheld> {
    let mut measure = Out { buf: None, len: 0 };
    measure.append(&[0; 4]);
    value(&mut measure, root)?;
    let size = measure.len;
    let size_i32 = i32::try_from(size).map_err(|_| Unheld)?;
    // SAFETY: a fresh allocation in the current memory context, `size` bytes, all of
    // which the second pass writes (the padding as zeros).
    let at = unsafe { pg_sys::palloc(size) }.cast::<u8>();
    // SAFETY: as above: `size` writable bytes at `at`.
    let buf = unsafe { std::slice::from_raw_parts_mut(at, size) };
    let mut out = Out { buf: Some(buf), len: 0 };
    out.append(&[0; 4]);
    value(&mut out, root)?;
    let jsonb = at.cast::<pg_sys::varlena>();
    // SAFETY: the varlena just written, its header the four bytes reserved first.
    unsafe { pgrx::set_varsize_4b(jsonb, size_i32) };
    Ok(jsonb)
}

/// Where the layout is written: nowhere on the pass that measures it.
struct Out<'a> {
    buf: Option<&'a mut [u8]>,
    len: usize,
}

impl Out<'_> {
    fn append(&mut self, bytes: &[u8]) {
        if let Some(buf) = self.buf.as_mut() {
            buf[self.len..self.len + bytes.len()].copy_from_slice(bytes);
        }
        self.len += bytes.len();
    }

    fn entry_at(&mut self, at: usize, entry: u32) {
        if let Some(buf) = self.buf.as_mut() {
            buf[at..at + 4].copy_from_slice(&entry.to_ne_bytes());
        }
    }

    /// Zeros up to the next multiple of four (from the varlena's start); how many.
    fn pad(&mut self) -> u32 {
        let pad = self.len.next_multiple_of(4) - self.len;
        self.append(&[0; 3][..pad]);
        pad as u32
    }
}

/// `node` written where `out` stands (`convertJsonbValue`); its entry.
fn value(out: &mut Out<'_>, node: &Node) -> Result<u32, Unheld> {
    Ok(match node {
        Node::String(s) => {
            out.append(s.bytes());
            s.1 as u32
        }
        Node::Number(n) => {
            let pad = out.pad();
            out.append(n.bytes());
            JENTRY_ISNUMERIC | (pad + n.1 as u32)
        }
        Node::Bool(true) => JENTRY_ISBOOL_TRUE,
        Node::Bool(false) => JENTRY_ISBOOL_FALSE,
        Node::Null => JENTRY_ISNULL,
        Node::Array(items) => {
            let base = out.len;
            let mut entries = container(out, items.len(), JB_FARRAY, 1)?;
            for item in items {
                let entry = value(out, item)?;
                entries.put(out, entry)?;
            }
            entries.close(out, base)?
        }
        Node::Object(members) => {
            let base = out.len;
            let mut entries = container(out, members.len(), JB_FOBJECT, 2)?;
            for (key, _) in members {
                out.append(key.bytes());
                entries.put(out, key.1 as u32)?;
            }
            for (_, member) in members {
                let entry = value(out, member)?;
                entries.put(out, entry)?;
            }
            entries.close(out, base)?
        }
    })
}

/// A container's entries being written: where the next goes, its index, and the length
/// of its children so far.
struct Entries {
    at: usize,
    i: usize,
    total: u32,
}

/// A container's header and room for its `n * per` entries (`per`: 2 for an object's
/// keys and values).
fn container(out: &mut Out<'_>, n: usize, kind: u32, per: usize) -> Result<Entries, Unheld> {
    if n > JB_CMASK {
        return Err(Unheld);
    }
    out.pad();
    out.append(&(n as u32 | kind).to_ne_bytes());
    let at = out.len;
    for _ in 0..n * per {
        out.append(&[0; 4]);
    }
    Ok(Entries { at, i: 0, total: 0 })
}

impl Entries {
    /// The next child's entry: every 32nd says where the child ends instead of its length.
    fn put(&mut self, out: &mut Out<'_>, entry: u32) -> Done {
        self.total = self
            .total
            .checked_add(entry & JENTRY_OFFLENMASK)
            .filter(|t| *t <= JENTRY_OFFLENMASK)
            .ok_or(Unheld)?;
        let entry = match self.i % JB_OFFSET_STRIDE {
            0 => (entry & JENTRY_TYPEMASK) | self.total | JENTRY_HAS_OFF,
            _ => entry,
        };
        out.entry_at(self.at + 4 * self.i, entry);
        self.i += 1;
        Ok(())
    }

    /// The container's own entry: its whole length, from where it began (before its
    /// padding).
    fn close(self, out: &Out<'_>, base: usize) -> Result<u32, Unheld> {
        let len = u32::try_from(out.len - base)
            .ok()
            .filter(|l| *l <= JENTRY_OFFLENMASK)
            .ok_or(Unheld)?;
        Ok(JENTRY_ISCONTAINER | len)
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
        self.put(Node::Bool(b))
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
