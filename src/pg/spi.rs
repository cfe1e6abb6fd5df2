//! Running a query and reading its rows: the one place rows are read (and the one
//! `unsafe` reader of SPI results). A [`Query`] declares its columns, by name and type,
//! next to its SQL; the first run of each plan checks both against the result, in order,
//! so a column moved or renamed in the SQL is a clear error at first use, and a reader
//! takes each value by name ([`Cols`]). A NULL where a value is needed is an error
//! naming the column ([`Cols::need`]), never a silent default. Plans are prepared once
//! per backend and kept.

use std::cell::RefCell;
use std::collections::HashMap;

use pgrx::datum::DatumWithOid;
use pgrx::pg_sys;
use pgrx::spi::{OwnedPreparedStatement, SpiClient};
use uuid::Uuid;

use pgprompt_core::Columns;
use pgprompt_core::Error;

/// A column a query returns: its name in the result (the SQL's own, or its alias) and
/// its type.
pub(crate) type Column = (&'static str, pg_sys::Oid);

/// A query, what it reads (for errors: "a turn row"), and the columns it returns in order.
pub(crate) struct Query {
    pub(crate) sql: String,
    what: &'static str,
    columns: Vec<Column>,
    generic: bool,
}

impl Query {
    pub(crate) fn new(what: &'static str, sql: impl Into<String>, columns: &[Column]) -> Query {
        Query {
            sql: sql.into(),
            what,
            columns: columns.to_vec(),
            generic: false,
        }
    }

    /// Runs on its generic plan, planned once per backend: for a statement whose every
    /// custom plan the plan cache would rather make (bench/NOTES.md, "planned at every call").
    /// Only for a statement of reference tables on Citus (docs/citus.sql): there a kept plan
    /// of a distributed table's statement grows at every execution (`run`).
    pub(crate) fn generic_plan(mut self) -> Query {
        self.generic = true;
        self
    }

    /// Several reads in one statement (`UNION ALL`): each part a `SELECT` over the same
    /// arguments with its own columns. The statement's first column, `row_of`, names the
    /// part a row is of; then every column any part returns, once by name (a name two parts
    /// return has one type), NULL in the rows of the parts without it. A reader takes
    /// `row_of`, then the part's columns by name as from the part alone.
    pub(crate) fn parts(what: &'static str, parts: &[(&'static str, String, &[Column])]) -> Query {
        let mut columns: Vec<Column> = vec![("row_of", pg_sys::TEXTOID)];
        for (_, _, cols) in parts {
            for c in cols.iter() {
                match columns.iter().find(|k| k.0 == c.0) {
                    Some(k) if k.1 != c.1 => pgrx::error!("pgprompt: internal error: two parts' {} differ", c.0),
                    Some(_) => {}
                    None => columns.push(*c),
                }
            }
        }
        let sql = parts
            .iter()
            .map(|(tag, sql, cols)| {
                let list = columns[1..]
                    .iter()
                    .map(|(name, oid)| match cols.iter().any(|c| c.0 == *name) {
                        true => format!("p.{name}"),
                        false => format!("NULL::{} AS {name}", type_name(*oid)),
                    })
                    .collect::<Vec<_>>()
                    .join(", ");
                format!("SELECT '{tag}'::text AS row_of, {list} FROM ({sql}) p")
            })
            .collect::<Vec<_>>()
            .join(" UNION ALL ");
        Query::new(what, sql, &columns)
    }
}

/// The SQL name of a type a loading query returns.
fn type_name(oid: pg_sys::Oid) -> &'static str {
    match oid {
        pg_sys::UUIDOID => "uuid",
        pg_sys::TEXTOID => "text",
        pg_sys::BOOLOID => "bool",
        pg_sys::INT4OID => "int4",
        pg_sys::INT8OID => "int8",
        pg_sys::FLOAT4OID => "float4",
        pg_sys::JSONBOID => "jsonb",
        pg_sys::DATEOID => "date",
        pg_sys::TEXTARRAYOID => "text[]",
        pg_sys::INT4ARRAYOID => "int4[]",
        _ => pgrx::error!("pgprompt: internal error: no SQL name for type {oid:?}"),
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

thread_local! {
    /// Plans of pgprompt's writes, prepared once per backend (SPI_keepplan) as
    /// [`PLANS`]'s are: a write is planned once, not on every call.
    static WRITES: RefCell<HashMap<&'static str, pgrx::spi::OwnedPreparedStatement>> = RefCell::new(HashMap::new());
}

/// Runs the write `sql` with `args` (whose types name the parameters' on the first run)
/// through its kept plan.
pub(crate) fn run_write<'c>(
    client: &mut SpiClient<'c>,
    sql: &'static str,
    args: &[DatumWithOid<'_>],
) -> pgrx::spi::SpiTupleTable<'c> {
    WRITES.with(|writes| {
        let mut writes = writes.borrow_mut();
        let statement = writes.entry(sql).or_insert_with(|| {
            let types: Vec<pgrx::PgOid> = args.iter().map(|a| pgrx::PgOid::from(a.oid())).collect();
            spi(client.prepare_mut(sql, &types)).keep()
        });
        planned(false, || spi(client.update(&*statement, None, args)))
    })
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
    mut read: impl FnMut(&Cols<'_>) -> Result<Option<R>, E>,
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
        let table = planned(q.generic, || spi(client.select(&plan.statement, None, args)));
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
        if check {
            let names: Vec<String> = (1..=natts).map(|i| column_name(desc, i)).collect();
            if let Some(problem) = mismatch(&q.columns, &names, &types) {
                pgrx::error!("pgprompt: internal error: {problem}: {}", q.sql);
            }
        }
        let width = types.len();
        let mut values = vec![pg_sys::Datum::from(0usize); width];
        let mut nulls = vec![true; width];
        for i in 0..n {
            pg_sys::heap_deform_tuple(*(*tt).vals.add(i), desc, values.as_mut_ptr(), nulls.as_mut_ptr());
            let c = Cols {
                values: &values,
                nulls: &nulls,
                types: &types,
                query: q,
                next: std::cell::Cell::new(0),
            };
            if let Some(r) = read(&c)? {
                out.push(r);
            }
        }
    }
    Ok(out)
}

/// Runs `f`, a kept plan's execution, under the plan cache mode it takes: its generic plan
/// where `generic` ([`Query::generic_plan`]); on Citus (`pgprompt.citus`) a plan made with
/// its arguments, since a kept plan whose distribution key is a parameter makes Citus 13.2
/// plan its shard query again at each execution and keep every such plan
/// (bench/NOTES-scale-out.md; a generic-plan statement reads reference tables only, which
/// Citus never prunes late); else whatever the plan cache chooses.
fn planned<R>(generic: bool, f: impl FnOnce() -> R) -> R {
    if generic {
        with_plan_cache_mode(c"force_generic_plan", f)
    } else if super::citus::on() {
        with_plan_cache_mode(c"force_custom_plan", f)
    } else {
        f()
    }
}

/// Runs `f` with `plan_cache_mode` set to `mode`, as a function's `SET` clause does (a
/// GUC nest level, undone after `f`, or by the (sub)transaction's abort when `f` raises
/// an error).
fn with_plan_cache_mode<R>(mode: &std::ffi::CStr, f: impl FnOnce() -> R) -> R {
    // SAFETY: the backend's own thread, inside a function call (a transaction is open):
    // what fmgr does for a function's SET clause. The name and value are NUL-terminated.
    let nest = unsafe {
        let nest = pg_sys::NewGUCNestLevel();
        pg_sys::set_config_option(
            c"plan_cache_mode".as_ptr(),
            mode.as_ptr(),
            pg_sys::GucContext::PGC_USERSET,
            pg_sys::GucSource::PGC_S_SESSION,
            pg_sys::GucAction::GUC_ACTION_SAVE,
            true,
            0,
            false,
        );
        nest
    };
    let r = f();
    // SAFETY: closes the nest level opened above, restoring the setting.
    unsafe { pg_sys::AtEOXact_GUC(true, nest) };
    r
}

/// The first column of a query's first row, if any.
pub(crate) fn first<T: pgrx::IntoDatum + pgrx::FromDatum>(
    client: &SpiClient<'_>,
    q: &Query,
    args: &[DatumWithOid<'_>],
) -> Option<T> {
    let name = q.columns.first().map_or("", |c| c.0);
    let rows: Result<Vec<T>, std::convert::Infallible> = run(client, q, args, |c| Ok(c.get::<T>(name)));
    rows.ok().and_then(|r| r.into_iter().next())
}

/// A result column's name (`SPI_fname`).
///
/// # Safety
/// `desc` is the current SPI result's descriptor and `i` one of its columns (1-based).
unsafe fn column_name(desc: pg_sys::TupleDesc, i: i32) -> String {
    // SAFETY: per the function's contract; SPI_fname returns a palloc'd copy (or NULL).
    let name = unsafe { pg_sys::SPI_fname(desc, i) };
    if name.is_null() {
        return String::new();
    }
    // SAFETY: a NUL-terminated string SPI_fname just allocated.
    unsafe { std::ffi::CStr::from_ptr(name) }.to_string_lossy().into_owned()
}

/// What differs between the columns a query declares and those its result has (name
/// and type, in order), if anything.
pub(crate) fn mismatch(declared: &[Column], names: &[String], types: &[pg_sys::Oid]) -> Option<String> {
    if declared.len() != names.len() {
        return Some(format!(
            "a query returns {} columns, not the {} it declares",
            names.len(),
            declared.len()
        ));
    }
    declared
        .iter()
        .zip(names.iter().zip(types))
        .enumerate()
        .find(|(_, ((name, oid), (n, t)))| name != n || oid != *t)
        .map(|(i, ((name, oid), (n, t)))| {
            format!(
                "column {} of a query is \"{n}\" of type {t:?}, not the declared \"{name}\" of type {oid:?}",
                i + 1
            )
        })
}

/// Typed access to one row, each value taken by the name its query declares.
pub(crate) struct Cols<'r> {
    values: &'r [pg_sys::Datum],
    nulls: &'r [bool],
    types: &'r [pg_sys::Oid],
    query: &'r Query,
    /// Where the search for the next column starts: just past the last one read.
    /// Readers take a row's columns mostly in the order their query declares them,
    /// so a read is one comparison, not a scan of every name before it (the scan was
    /// 1.2% of a 200-turn preview's samples; profile in bench/NOTES.md).
    next: std::cell::Cell<usize>,
}

impl Cols<'_> {
    /// The position of column `name` (a reader naming a column its query does not
    /// declare is a bug).
    fn at(&self, name: &str) -> usize {
        let columns = &self.query.columns;
        let start = self.next.get().min(columns.len());
        let found = columns[start..]
            .iter()
            .position(|c| c.0 == name)
            .map(|i| start + i)
            .or_else(|| columns[..start].iter().position(|c| c.0 == name));
        match found {
            Some(i) if i < self.values.len() => {
                self.next.set(i + 1);
                i
            }
            _ => pgrx::error!(
                "pgprompt: internal error: a reader takes column \"{name}\", which its query does not return: {}",
                self.query.sql
            ),
        }
    }

    /// Column `name`'s value (`None` for NULL).
    pub(crate) fn get<T: pgrx::IntoDatum + pgrx::FromDatum>(&self, name: &str) -> Option<T> {
        let i = self.at(name);
        let (value, null, oid) = (self.values[i], self.nulls[i], self.types[i]);
        if !T::is_compatible_with(oid) {
            pgrx::error!(
                "pgprompt: internal error: column \"{name}\" of a query has type {oid:?}, not {}",
                std::any::type_name::<T>()
            );
        }
        // SAFETY: the datum comes from the current row, deformed with its own
        // descriptor, and its type was checked against T above.
        unsafe { T::from_polymorphic_datum(value, null, oid) }
    }

    /// Column `name`'s value, where the compile needs one: NULL is `data_corrupted`
    /// naming the column (the schema allows none there, or the query lost it).
    pub(crate) fn need<T: pgrx::IntoDatum + pgrx::FromDatum>(&self, name: &str) -> Result<T, Error> {
        self.get::<T>(name).ok_or_else(|| self.null(name))
    }

    /// Column `name`'s raw datum (`None` for NULL), for a reader that decodes it itself;
    /// its type must be `oid` (`spelled` in the error: a mismatch is a bug).
    fn datum(&self, name: &str, oid: pg_sys::Oid, spelled: &str) -> Option<pg_sys::Datum> {
        let i = self.at(name);
        if self.types[i] != oid {
            pgrx::error!(
                "pgprompt: internal error: column \"{name}\" of a query has type {:?}, not {spelled}",
                self.types[i]
            );
        }
        (!self.nulls[i]).then_some(self.values[i])
    }

    /// A row of a [`Query::parts`] statement whose `row_of` names no part its reader takes
    /// (a part declared and not read is a bug).
    pub(crate) fn unread_part(&self, tag: &str) -> ! {
        pgrx::error!(
            "pgprompt: internal error: a reader takes no row of part \"{tag}\": {}",
            self.query.sql
        )
    }
}

/// The row's columns as the core's readers take them (`pgprompt_core::Columns`):
/// each typed read checks the column's type against the query's (a mismatch is a bug,
/// reported as an internal error).
impl Columns for Cols<'_> {
    fn what(&self) -> &str {
        self.query.what
    }
    fn text(&self, name: &str) -> Option<String> {
        self.get::<String>(name)
    }
    fn uuid(&self, name: &str) -> Option<Uuid> {
        self.get::<pgrx::Uuid>(name).map(core_uuid)
    }
    fn int4(&self, name: &str) -> Option<i32> {
        self.get::<i32>(name)
    }
    fn int8(&self, name: &str) -> Option<i64> {
        self.get::<i64>(name)
    }
    fn float4(&self, name: &str) -> Option<f32> {
        self.get::<f32>(name)
    }
    fn boolean(&self, name: &str) -> Option<bool> {
        self.get::<bool>(name)
    }
    fn days(&self, name: &str) -> Option<i32> {
        self.get::<pgrx::datum::Date>(name).map(|d| d.to_pg_epoch_days())
    }
    fn ints(&self, name: &str) -> Vec<Option<i32>> {
        // Read with int4's layout given, not looked up: pgrx's `Vec` and `Array` look the
        // array type and the element's layout up in the catalog cache for every value
        // (two values a turn, a tenth of reading one).
        let Some(value) = self.datum(name, pg_sys::INT4ARRAYOID, "int4[]") else {
            return Vec::new();
        };
        let (mut elems, mut nulls, mut n) = (std::ptr::null_mut(), std::ptr::null_mut(), 0);
        // SAFETY: a non-NULL int4[] datum of the current row (checked above), detoasted
        // into the current memory context; int4's length, by-value passing and alignment
        // are fixed by PostgreSQL. deconstruct_array sets `n` and both arrays of `n`.
        unsafe {
            let array = pg_sys::pg_detoast_datum(value.cast_mut_ptr()).cast::<pg_sys::ArrayType>();
            pg_sys::deconstruct_array(
                array,
                pg_sys::INT4OID,
                4,
                true,
                pg_sys::TYPALIGN_INT as std::ffi::c_char,
                &mut elems,
                &mut nulls,
                &mut n,
            );
            let n = usize::try_from(n).unwrap_or(0);
            if n == 0 {
                return Vec::new();
            }
            let (elems, nulls) = (
                std::slice::from_raw_parts(elems, n),
                std::slice::from_raw_parts(nulls, n),
            );
            elems
                .iter()
                .zip(nulls)
                .map(|(d, &isnull)| (!isnull).then(|| d.value() as i32))
                .collect()
        }
    }
    fn jsonb(&self, name: &str) -> Result<Option<serde_json::Value>, ()> {
        let Some(value) = self.datum(name, pg_sys::JSONBOID, "jsonb") else {
            return Ok(None);
        };
        // SAFETY: a non-NULL datum of the current row whose type is jsonb (checked).
        unsafe { super::jsonb::jsonb_value(value) }.map(Some).ok_or(())
    }
}

/// The first row's first column of a read (`None`: no row, or NULL), run read-only: it
/// takes no transaction id, so it runs on a hot standby too (pgrx's `Spi::get_one`
/// marks the transaction as writing).
pub(crate) fn read_one<T: pgrx::IntoDatum + pgrx::FromDatum>(sql: &str, args: &[DatumWithOid<'_>]) -> Option<T> {
    pgrx::Spi::connect(|client| client.select(sql, Some(1), args)?.first().get_one::<T>())
        .ok()
        .flatten()
}

/// The first row's two first columns of a read, run read-only (as [`read_one`]).
pub(crate) fn read_two<A, B>(
    sql: &str,
    args: &[DatumWithOid<'_>],
) -> Result<(Option<A>, Option<B>), pgrx::spi::SpiError>
where
    A: pgrx::IntoDatum + pgrx::FromDatum,
    B: pgrx::IntoDatum + pgrx::FromDatum,
{
    pgrx::Spi::connect(|client| client.select(sql, Some(1), args)?.first().get_two::<A, B>())
}
