//! Maps the core's errors onto ereport: the SQLSTATE, the message, DETAIL and HINT.

use pgrx::pg_sys::panic::ErrorReport;
use pgrx::prelude::*;
use pgrx::PgSqlErrorCode;

use pgprompt_core::{Code, Error};

/// The SQLSTATE of each error: the core's (`Code::sqlstate`, the one table), packed as
/// PostgreSQL's `MAKE_SQLSTATE` packs its five characters, six bits each.
pub fn sqlstate(code: Code) -> PgSqlErrorCode {
    let packed = code.sqlstate().bytes().enumerate().fold(0i32, |acc, (i, c)| {
        acc | (i32::from(c.wrapping_sub(b'0') & 0x3F) << (6 * i))
    });
    PgSqlErrorCode::from(packed)
}

/// Raises `e` as a PostgreSQL ERROR. Never returns.
pub fn raise(e: Error) -> ! {
    let mut report = ErrorReport::new(sqlstate(e.code), e.message, "pgprompt");
    if let Some(d) = e.detail {
        report = report.set_detail(d);
    }
    if let Some(h) = e.hint {
        report = report.set_hint(h);
    }
    report.report(PgLogLevel::ERROR);
    unreachable!("ERROR does not return")
}

pub trait OrRaise<T> {
    fn or_raise(self) -> T;
}

impl<T> OrRaise<T> for Result<T, Error> {
    fn or_raise(self) -> T {
        match self {
            Ok(v) => v,
            Err(e) => raise(e),
        }
    }
}
