//! Running a query and reading its rows: the one place rows are read (and the one
//! `unsafe` reader of SPI results). A [`Query`] declares its columns' types next to its
//! SQL; the first run of each plan checks them against the result, so a mismatch is a
//! clear error at first use. Plans are prepared once per backend and kept.

use std::cell::RefCell;
use std::collections::HashMap;

use pgrx::datum::DatumWithOid;
use pgrx::pg_sys;
use pgrx::spi::{OwnedPreparedStatement, SpiClient};
use uuid::Uuid;

use pgprompt_core::rows::iso_date;

/// A query and the type of each column it returns.
pub(crate) struct Query {
    pub(crate) sql: String,
    columns: Vec<pg_sys::Oid>,
}

impl Query {
    pub(crate) fn new(sql: impl Into<String>, columns: &[pg_sys::Oid]) -> Query {
        Query {
            sql: sql.into(),
            columns: columns.to_vec(),
        }
    }
}

/// A kept plan, and whether its result's columns were checked against the declaration.
struct Plan {
    statement: OwnedPreparedStatement,
    checked: bool,
}

thread_local! {
    /// Plans of the loading queries, prepared once per backend (SPI_keepplan); the plan
    /// cache revalidates them when the tables change.
    static PLANS: RefCell<HashMap<String, Plan>> = RefCell::new(HashMap::new());
}

/// An SPI failure is a bug, not bad input: reported as an internal error.
pub(crate) fn spi<T>(r: Result<T, pgrx::spi::SpiError>) -> T {
    match r {
        Ok(v) => v,
        Err(e) => pgrx::error!("pgprompt: SPI failed: {e}"),
    }
}

/// An optional argument: the value, or a NULL of its type.
pub(crate) fn nullable<T: pgrx::IntoDatum>(v: Option<T>) -> DatumWithOid<'static> {
    match v {
        Some(v) => v.into(),
        None => DatumWithOid::null::<T>(),
    }
}

pub(crate) fn pg_uuid(u: Uuid) -> pgrx::Uuid {
    pgrx::Uuid::from_bytes(*u.as_bytes())
}

pub(crate) fn core_uuid(u: pgrx::Uuid) -> Uuid {
    Uuid::from_bytes(*u.as_bytes())
}

/// Runs `q` with `args` and reads every row with `read`, in order, keeping what it
/// returns. `read` sees each row deformed once (`heap_deform_tuple`), not column by
/// column through guarded SPI calls: history reads a few hundred rows of 28 columns.
pub(crate) fn run<R, E>(
    client: &SpiClient<'_>,
    q: &Query,
    args: &[DatumWithOid<'_>],
    mut read: impl FnMut(&mut Cols<'_>) -> Result<Option<R>, E>,
) -> Result<Vec<R>, E> {
    let (table, check) = PLANS.with(|plans| {
        let mut plans = plans.borrow_mut();
        let plan = match plans.get_mut(&q.sql) {
            Some(p) => p,
            None => {
                let types: Vec<pgrx::PgOid> = args.iter().map(|a| pgrx::PgOid::from(a.oid())).collect();
                let statement = spi(client.prepare(&q.sql, &types)).keep();
                plans.entry(q.sql.clone()).or_insert(Plan {
                    statement,
                    checked: false,
                })
            }
        };
        let table = spi(client.select(&plan.statement, None, args));
        let check = !plan.checked;
        plan.checked = true;
        (table, check)
    });
    let n = table.len();
    let mut out = Vec::with_capacity(n);
    // SAFETY: `select` above just produced this result through SPI, and nothing has run
    // through SPI since, so SPI_tuptable is its tuple table (set even when it has no
    // rows); it stays valid until the next SPI call or SPI_finish, and `read` makes
    // no SPI call (it only converts values), so `tt` is valid throughout. Rows are deformed with the
    // table's own descriptor into buffers of its width, and `Cols::next` checks each
    // value's type before converting it.
    unsafe {
        let tt = pg_sys::SPI_tuptable;
        if tt.is_null() || (*tt).numvals as usize != n {
            pgrx::error!("pgprompt: internal error: a query's rows are not the current SPI result");
        }
        let desc = (*tt).tupdesc;
        let natts = (*desc).natts;
        let types: Vec<pg_sys::Oid> = (1..=natts).map(|i| pg_sys::SPI_gettypeid(desc, i)).collect();
        if check && types != q.columns {
            pgrx::error!(
                "pgprompt: internal error: a query returns columns of types {types:?}, not the declared {:?}: {}",
                q.columns,
                q.sql
            );
        }
        let width = types.len();
        let mut values = vec![pg_sys::Datum::from(0usize); width];
        let mut nulls = vec![true; width];
        for i in 0..n {
            pg_sys::heap_deform_tuple(*(*tt).vals.add(i), desc, values.as_mut_ptr(), nulls.as_mut_ptr());
            let mut c = Cols {
                values: &values,
                nulls: &nulls,
                types: &types,
                at: 0,
            };
            if let Some(r) = read(&mut c)? {
                out.push(r);
            }
        }
    }
    Ok(out)
}

/// The first column of a query's first row, if any.
pub(crate) fn first<T: pgrx::IntoDatum + pgrx::FromDatum>(
    client: &SpiClient<'_>,
    q: &Query,
    args: &[DatumWithOid<'_>],
) -> Option<T> {
    let rows: Result<Vec<T>, std::convert::Infallible> = run(client, q, args, |c| Ok(c.next::<T>()));
    rows.ok().and_then(|r| r.into_iter().next())
}

/// Typed access to one row, read in column order.
pub(crate) struct Cols<'r> {
    values: &'r [pg_sys::Datum],
    nulls: &'r [bool],
    types: &'r [pg_sys::Oid],
    at: usize,
}

impl Cols<'_> {
    pub(crate) fn next<T: pgrx::IntoDatum + pgrx::FromDatum>(&mut self) -> Option<T> {
        let i = self.at;
        self.at += 1;
        let (Some(&value), Some(&null), Some(&oid)) = (self.values.get(i), self.nulls.get(i), self.types.get(i)) else {
            pgrx::error!("pgprompt: internal error: a query has no column {}", i + 1);
        };
        if !T::is_compatible_with(oid) {
            pgrx::error!(
                "pgprompt: internal error: column {} of a query has type {oid:?}, not {}",
                i + 1,
                std::any::type_name::<T>()
            );
        }
        // SAFETY: the datum comes from the current row, deformed with its own
        // descriptor, and its type was checked against T above.
        unsafe { T::from_polymorphic_datum(value, null, oid) }
    }
    pub(crate) fn uuid(&mut self) -> Option<Uuid> {
        self.next::<pgrx::Uuid>().map(core_uuid)
    }
    pub(crate) fn text(&mut self) -> Option<String> {
        self.next::<String>()
    }
    pub(crate) fn text_or(&mut self, default: &str) -> String {
        self.text().unwrap_or_else(|| default.to_string())
    }
    pub(crate) fn bool(&mut self) -> bool {
        self.next::<bool>().unwrap_or(false)
    }
    /// A `date` column as `to_char(d, 'YYYY-MM-DD')` spells it; "" for NULL or infinity.
    pub(crate) fn date(&mut self) -> String {
        self.next::<pgrx::datum::Date>()
            .and_then(|d| iso_date(d.to_pg_epoch_days()))
            .unwrap_or_default()
    }
    /// A `jsonb` column read from its binary form (`Err(())` when it nests deeper
    /// than serde_json reads); `None` for NULL.
    pub(crate) fn jsonb(&mut self) -> Result<Option<serde_json::Value>, ()> {
        let i = self.at;
        self.at += 1;
        let (Some(&value), Some(&null), Some(&oid)) = (self.values.get(i), self.nulls.get(i), self.types.get(i)) else {
            pgrx::error!("pgprompt: internal error: a query has no column {}", i + 1);
        };
        if oid != pg_sys::JSONBOID {
            pgrx::error!(
                "pgprompt: internal error: column {} of a query has type {oid:?}, not jsonb",
                i + 1
            );
        }
        if null {
            return Ok(None);
        }
        // SAFETY: a non-NULL datum of the current row whose type is jsonb (checked).
        unsafe { super::jsonb::jsonb_value(value) }.map(Some).ok_or(())
    }
    pub(crate) fn ints(&mut self) -> Vec<Option<i32>> {
        self.next::<Vec<Option<i32>>>().unwrap_or_default()
    }
}
