//! JSON at the SQL boundary: a body returned as `json` (its bytes exactly as the
//! compiler wrote them: `json` output copies text, it never re-serializes), and jsonb
//! arguments read as their JSON text.

use std::ffi::c_char;

use pgrx::callconv::{BoxRet, FcInfo};
use pgrx::datum::Datum;
use pgrx::pgrx_sql_entity_graph::metadata::{ArgumentError, ReturnsError, ReturnsRef, SqlMappingRef, SqlTranslatable};
use pgrx::{direct_function_call_as_datum, pg_sys, IntoDatum};

/// JSON text returned as `json`.
pub struct JsonText(pub String);

impl IntoDatum for JsonText {
    fn into_datum(self) -> Option<pg_sys::Datum> {
        // `json` is stored as text: the same varlena.
        self.0.as_str().into_datum()
    }

    fn type_oid() -> pg_sys::Oid {
        pg_sys::JSONOID
    }
}

unsafe impl BoxRet for JsonText {
    unsafe fn box_into<'fcx>(self, fcinfo: &mut FcInfo<'fcx>) -> Datum<'fcx> {
        match self.into_datum() {
            // SAFETY: a text varlena palloc'd in the current (the call's) memory context.
            Some(datum) => unsafe { fcinfo.return_raw_datum(datum) },
            None => fcinfo.return_null(),
        }
    }
}

unsafe impl SqlTranslatable for JsonText {
    const TYPE_IDENT: &'static str = pgrx::pgrx_resolved_type!(JsonText);
    const TYPE_ORIGIN: pgrx::pgrx_sql_entity_graph::metadata::TypeOrigin =
        pgrx::pgrx_sql_entity_graph::metadata::TypeOrigin::External;
    const ARGUMENT_SQL: Result<SqlMappingRef, ArgumentError> = Ok(SqlMappingRef::literal("json"));
    const RETURN_SQL: Result<ReturnsRef, ReturnsError> = Ok(ReturnsRef::One(SqlMappingRef::literal("json")));
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

unsafe impl<'fcx> pgrx::callconv::ArgAbi<'fcx> for JsonbArg {
    unsafe fn unbox_arg_unchecked(arg: pgrx::callconv::Arg<'_, 'fcx>) -> Self {
        // SAFETY: the caller guarantees `arg` is this function's jsonb argument.
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

/// A `json` argument as its text (`json` is stored as text: no parse, no re-serialization).
pub struct JsonArg(pub String);

impl pgrx::FromDatum for JsonArg {
    unsafe fn from_polymorphic_datum(datum: pg_sys::Datum, is_null: bool, oid: pg_sys::Oid) -> Option<Self> {
        // SAFETY: a `json` datum is a text varlena; String reads (and detoasts) it.
        unsafe { String::from_polymorphic_datum(datum, is_null, oid) }.map(JsonArg)
    }
}

unsafe impl<'fcx> pgrx::callconv::ArgAbi<'fcx> for JsonArg {
    unsafe fn unbox_arg_unchecked(arg: pgrx::callconv::Arg<'_, 'fcx>) -> Self {
        // SAFETY: the caller guarantees `arg` is this function's json argument.
        unsafe { arg.unbox_arg_using_from_datum() }.unwrap_or_else(|| pgrx::error!("pgprompt: a NULL json argument"))
    }
}

unsafe impl SqlTranslatable for JsonArg {
    const TYPE_IDENT: &'static str = pgrx::pgrx_resolved_type!(JsonArg);
    const TYPE_ORIGIN: pgrx::pgrx_sql_entity_graph::metadata::TypeOrigin =
        pgrx::pgrx_sql_entity_graph::metadata::TypeOrigin::External;
    const ARGUMENT_SQL: Result<SqlMappingRef, ArgumentError> = Ok(SqlMappingRef::literal("json"));
    const RETURN_SQL: Result<ReturnsRef, ReturnsError> = Ok(ReturnsRef::One(SqlMappingRef::literal("json")));
}
