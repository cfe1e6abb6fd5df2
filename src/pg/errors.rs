//! Maps the core's errors onto ereport: the SQLSTATE, the message, DETAIL and HINT.

use pgrx::pg_sys::panic::ErrorReport;
use pgrx::prelude::*;
use pgrx::PgSqlErrorCode;

use pgprompt_core::Error;

fn code_of(sqlstate: &str) -> PgSqlErrorCode {
    match sqlstate {
        "54000" => PgSqlErrorCode::ERRCODE_PROGRAM_LIMIT_EXCEEDED,
        "P0002" => PgSqlErrorCode::ERRCODE_NO_DATA_FOUND,
        "55000" => PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
        "25006" => PgSqlErrorCode::ERRCODE_READ_ONLY_SQL_TRANSACTION,
        _ => PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
    }
}

/// Raises `e` as a PostgreSQL ERROR. Never returns.
pub fn raise(e: Error) -> ! {
    let mut report = ErrorReport::new(code_of(e.code.sqlstate()), e.message, "pgprompt");
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

/// An SPI failure is a bug, not bad input: reported as an internal error.
pub fn spi<T>(r: Result<T, pgrx::spi::SpiError>) -> T {
    match r {
        Ok(v) => v,
        Err(e) => pgrx::error!("pgprompt: SPI failed: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_maps_to_its_sqlstate() {
        for code in pgprompt_core::Code::ALL {
            let mapped = code_of(code.sqlstate());
            let expected = match code.sqlstate() {
                "22023" => PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
                "54000" => PgSqlErrorCode::ERRCODE_PROGRAM_LIMIT_EXCEEDED,
                "P0002" => PgSqlErrorCode::ERRCODE_NO_DATA_FOUND,
                "55000" => PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
                "25006" => PgSqlErrorCode::ERRCODE_READ_ONLY_SQL_TRANSACTION,
                other => panic!("unmapped SQLSTATE {other}"),
            };
            assert_eq!(mapped, expected);
        }
    }
}
