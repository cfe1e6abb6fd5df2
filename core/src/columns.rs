//! Stored rows read column by column: the extension runs a query and hands its row over
//! as [`Columns`]; the core's readers here name the columns they take and parse each once
//! (a turn's JSON columns with `fields`, a round's with `rounds`). A reader for a new
//! column changes here and in the query that returns it, nowhere else.

use serde_json::Value;
use uuid::Uuid;

use crate::error::{Code, Error, Result};
use crate::fields;
use crate::kinds::{CacheTtl, Mechanism, Mode, Role, TurnKind, UserKind, Wire};
use crate::rounds::{self, Round};
use crate::rows::{iso_date, Lifecycle, Model, Turn, User};
use crate::tokens::Tokenizer;

/// One row of a query, its columns by the names the query gives them (`None`: NULL).
/// The extension implements it over its database reads; a reader that names a column
/// the query does not return, or takes it as another type, is the implementer's bug to
/// report.
pub trait Columns {
    /// What the row is, for errors: "the conversation row", "a round row".
    fn what(&self) -> &str;
    /// A `text` column.
    fn text(&self, name: &str) -> Option<String>;
    /// A `uuid` column.
    fn uuid(&self, name: &str) -> Option<Uuid>;
    /// An `int4` column.
    fn int4(&self, name: &str) -> Option<i32>;
    /// An `int8` column.
    fn int8(&self, name: &str) -> Option<i64>;
    /// A `float4` column.
    fn float4(&self, name: &str) -> Option<f32>;
    /// A `bool` column.
    fn boolean(&self, name: &str) -> Option<bool>;
    /// A `date` column, in days since 2000-01-01 (PostgreSQL's epoch).
    fn days(&self, name: &str) -> Option<i32>;
    /// An `int4[]` column (NULL: empty).
    fn ints(&self, name: &str) -> Vec<Option<i32>>;
    /// A `jsonb` column's value, read from its binary form; `Err(())` when it nests
    /// deeper than serde_json reads (the one way it fails: each reader names its own
    /// error, `data_corrupted` or a round's `round_invalid`).
    #[allow(clippy::result_unit_err)]
    fn jsonb(&self, name: &str) -> std::result::Result<Option<Value>, ()>;

    /// The error of a NULL in column `name`, where a value is needed (`data_corrupted`).
    fn null(&self, name: &str) -> Error {
        Error::new(
            Code::DataCorrupted,
            format!("column \"{name}\" of {} is NULL, where a value is needed", self.what()),
        )
        .hint("The schema allows no NULL there: a row was written around the extension's constraints.")
    }
    /// A `text` column where a value is needed.
    fn need_text(&self, name: &str) -> Result<String> {
        self.text(name).ok_or_else(|| self.null(name))
    }
    /// A `uuid` column where a value is needed.
    fn need_uuid(&self, name: &str) -> Result<Uuid> {
        self.uuid(name).ok_or_else(|| self.null(name))
    }
    /// A `bool` column where a value is needed.
    fn need_bool(&self, name: &str) -> Result<bool> {
        self.boolean(name).ok_or_else(|| self.null(name))
    }
    /// A `date` column as `to_char(d, 'YYYY-MM-DD')` spells it ("" for infinity), where a
    /// value is needed.
    fn date(&self, name: &str) -> Result<String> {
        let days = self.days(name).ok_or_else(|| self.null(name))?;
        Ok(iso_date(days).unwrap_or_default())
    }
    /// A `jsonb` column's value (`None`: NULL); one nested deeper than serde_json reads
    /// (refused on write) is `data_corrupted` naming it.
    fn json(&self, name: &str) -> Result<Option<Value>> {
        self.jsonb(name).map_err(|()| {
            Error::new(
                Code::DataCorrupted,
                format!("column \"{name}\" of {} nests deeper than 128 levels", self.what()),
            )
            .hint("The write checks refuse such a value: a row was written around the extension's constraints.")
        })
    }
    /// A `jsonb` column's value where a value is needed.
    fn need_json(&self, name: &str) -> Result<Value> {
        self.json(name)?.ok_or_else(|| self.null(name))
    }
}

fn need<T>(c: &(impl Columns + ?Sized), name: &str, value: Option<T>) -> Result<T> {
    value.ok_or_else(|| c.null(name))
}

impl Turn {
    /// Turn `id` as far as who spoke what: its `seq`, `kind`, `author_id`, `answerer_id`,
    /// `poster_id`, `content`, `prompt`, `origin` and `sender_conversation_id` (what the
    /// transcript reads; [`Turn::from_columns`] reads the rest on top).
    pub(crate) fn spoken_from_columns(c: &(impl Columns + ?Sized), id: Uuid) -> Result<Turn> {
        let seq = need(c, "seq", c.int8("seq"))?;
        let kind = TurnKind::from_column("turns.kind", &c.need_text("kind")?)?;
        let mut t = Turn::new(id, seq, kind);
        t.author_id = c.uuid("author_id");
        t.answerer_id = c.uuid("answerer_id");
        t.poster_id = c.uuid("poster_id");
        t.content = c.text("content");
        t.prompt = c.text("prompt");
        t.origin = c.text("origin");
        t.sender_conversation_id = c.uuid("sender_conversation_id");
        Ok(t)
    }

    /// A turn as stored, its JSON columns parsed once (`None`: no turn, a left join's
    /// empty side), and whether it is sealed (`sealed`). The columns are the extension's
    /// turn select, read in this order: `id`, `seq`, `kind`, `author_id`, `answerer_id`,
    /// `poster_id`, `content`, `prompt`, `origin`, `sender_conversation_id`, `role`, `mode`,
    /// `inline`, `variables`, `input`, `tools`, `callables`, `model`, `history`,
    /// `memory_user_id`, `summary`, `summary_round`, `request_options`, `content_tokens`,
    /// `prompt_tokens`, `sealed_preface`, with `dated` its day `created_on` (otherwise read
    /// later, with the workspace's time zone), and `sealed`.
    pub fn from_columns(c: &impl Columns, dated: bool) -> Result<Option<(Turn, bool)>> {
        let Some(id) = c.uuid("id") else { return Ok(None) };
        let mut t = Turn::spoken_from_columns(c, id)?;
        t.role = c
            .text("role")
            .map(|r| Role::from_column("turns.role", &r))
            .transpose()?;
        t.mode = Mode::from_column("turns.mode", &c.need_text("mode")?)?;
        t.inline = fields::parse_inline(&c.need_json("inline")?)?;
        t.variables = fields::parse_variables(&c.need_json("variables")?)?;
        t.input = c.json("input")?.map(|i| fields::parse_raw_input(&i)).transpose()?;
        t.tools = c.json("tools")?.map(|i| fields::parse_tools(&i)).transpose()?;
        t.callables = fields::parse_callables(&c.need_json("callables")?)?;
        t.model = c.text("model");
        t.history = c.json("history")?.map(|h| fields::parse_history(&h)).transpose()?;
        t.memory_user_id = c.uuid("memory_user_id");
        t.summary = c.text("summary");
        t.summary_round = c.int4("summary_round");
        t.request_options = fields::parse_request_options(&c.need_json("request_options")?)?;
        t.content_tokens = c.ints("content_tokens");
        t.prompt_tokens = c.ints("prompt_tokens");
        t.sealed_preface = c
            .json("sealed_preface")?
            .map(|p| fields::parse_preface(&p))
            .transpose()?;
        if dated {
            t.date = c.date("created_on")?;
        }
        Ok(Some((t, c.need_bool("sealed")?)))
    }
}

impl User {
    /// A user as stored, from the columns `id`, `handle`, `display_name`, `kind`,
    /// `steward_id`, `prompt_mechanism`, `prompt_template`, `model`, `reasoning_replay`,
    /// `application` and `request_options`.
    pub fn from_columns(c: &impl Columns) -> Result<User> {
        let kind = UserKind::from_column("users.kind", &c.need_text("kind")?)?;
        let mut u = User::new(c.need_uuid("id")?, &c.need_text("handle")?, kind);
        u.display_name = c.text("display_name");
        u.steward_id = c.uuid("steward_id");
        u.prompt_mechanism = Mechanism::from_column("users.prompt_mechanism", &c.need_text("prompt_mechanism")?)?;
        u.prompt_template = c.json("prompt_template")?;
        u.model = c.text("model");
        u.reasoning_replay = c.need_bool("reasoning_replay")?;
        u.application = c.text("application");
        u.request_options = fields::parse_request_options(&c.need_json("request_options")?)?;
        Ok(u)
    }
}

impl Model {
    /// A model as stored, with its profile (the text `profile`: the row's, else the one
    /// its name matches; NULL: none) and its lifecycle on the day (`retired`,
    /// `deprecated`), from the columns `name`, `wire`, `tokenizer`, `advisory_window`,
    /// `hard_window`, `native_images`, `token_margin`, `max_output_tokens`, `cache_ttl`,
    /// `history_cache_ttl`, `request_options` and `provider`; and whether `token_margin_auto` asks
    /// for its calibration.
    pub fn from_columns(c: &impl Columns) -> Result<(Model, bool)> {
        let mut m = Model::new(
            &c.need_text("name")?,
            Wire::from_column("models.wire", &c.need_text("wire")?)?,
        );
        m.tokenizer = Tokenizer::parse(&c.need_text("tokenizer")?)?;
        m.advisory_window = c.int4("advisory_window");
        m.hard_window = c.int4("hard_window");
        m.native_images = c.need_bool("native_images")?;
        m.token_margin = need(c, "token_margin", c.float4("token_margin"))?;
        let auto = c.need_bool("token_margin_auto")?;
        m.max_output_tokens = need(c, "max_output_tokens", c.int4("max_output_tokens"))?;
        m.cache_ttl = CacheTtl::from_column("models.cache_ttl", &c.need_text("cache_ttl")?)?;
        m.history_cache_ttl = c
            .text("history_cache_ttl")
            .map(|t| CacheTtl::from_column("models.history_cache_ttl", &t))
            .transpose()?;
        m.request_options = fields::parse_request_options(&c.need_json("request_options")?)?;
        m.provider = c
            .text("provider")
            .map(|p| crate::kinds::Provider::from_column("models.provider", &p))
            .transpose()?;
        // No profile: the model row names none and no shipped profile has its name.
        let profile = crate::profile::Profile::from_json(&c.text("profile").unwrap_or_default())?;
        m.lifecycle = Lifecycle {
            retired: c.need_bool("retired")?,
            deprecated: c.need_bool("deprecated")?,
        };
        Ok((m.with_profile(profile), auto))
    }
}

impl Round {
    /// A round as stored (`n`, `assistant`, `results`, `steers`, `aborted`), parsed once
    /// (`turn` names it in errors). Its JSON columns are read from their binary form:
    /// writing them as text and parsing that back was most of the cost of a tool round
    /// (docs/guide.md, "Performance: where the time goes").
    pub fn from_columns(c: &impl Columns, turn: Uuid) -> Result<Round> {
        let n = need(c, "n", c.int4("n"))?;
        let column = |name: &str| -> Result<Value> {
            match c.jsonb(name) {
                Ok(Some(v)) => Ok(v),
                Ok(None) => Err(c.null(name)),
                Err(()) => Err(Error::new(
                    Code::RoundInvalid,
                    format!("round {n} of turn {turn}: {name} nests deeper than 128 levels at /{name}"),
                )),
            }
        };
        let assistant = column("assistant")?;
        let results = column("results")?;
        let steers = column("steers")?;
        let mut round = rounds::parse_values(
            n,
            [&assistant, &results, &steers],
            c.need_bool("aborted")?,
            Some(turn),
            crate::wire::replay::part,
        )?;
        // What the request that first carried the round cleared (written by pgprompt).
        round.cleared = match c.jsonb("cleared") {
            Ok(Some(v)) => crate::clearing::Record::from_column(&v),
            Ok(None) | Err(()) => None,
        };
        round.sent = c.need_bool("sent")?;
        Ok(round)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::Row;

    fn turn_row() -> Row {
        let mut r = Row::default();
        r.text.insert("id", Uuid::from_u128(1).to_string());
        r.int.insert("seq", 3);
        r.text.insert("kind", "reply".into());
        r.text.insert("mode", "direct_reply".into());
        for (name, v) in [
            ("inline", "[]"),
            ("variables", "{}"),
            ("callables", "[]"),
            ("request_options", "{}"),
        ] {
            r.json.insert(name, Some(serde_json::from_str(v).expect("json")));
        }
        r.boolean.insert("sealed", false);
        r.int.insert("created_on", 9830);
        r
    }

    #[test]
    fn a_turn_reads_each_column_by_name_and_a_null_where_a_value_is_needed_is_data_corrupted() {
        let (t, sealed) = Turn::from_columns(&turn_row(), true).expect("a turn").expect("a row");
        assert_eq!((t.seq, t.date.as_str(), sealed), (3, "2026-11-30", false));
        let (undated, _) = Turn::from_columns(&turn_row(), false).expect("a turn").expect("a row");
        assert_eq!(undated.date, "", "read later, with the workspace");
        let mut no_mode = turn_row();
        no_mode.text.remove("mode");
        let e = Turn::from_columns(&no_mode, true).expect_err("refused");
        assert_eq!(e.code, Code::DataCorrupted);
        assert!(
            e.message.contains(r#"column "mode" of a test row is NULL"#),
            "{}",
            e.message
        );
        let mut empty = turn_row();
        empty.text.remove("id");
        assert!(
            Turn::from_columns(&empty, true).expect("no turn").is_none(),
            "a left join's empty side"
        );
    }

    #[test]
    fn a_round_nested_deeper_than_serde_reads_is_round_invalid_naming_its_column() {
        let mut r = Row::default();
        r.int.insert("n", 2);
        r.json.insert("assistant", None);
        r.json.insert("results", Some(Value::Array(Vec::new())));
        r.json.insert("steers", Some(Value::Array(Vec::new())));
        r.boolean.insert("aborted", false);
        let e = Round::from_columns(&r, Uuid::from_u128(9)).expect_err("refused");
        assert_eq!(e.code, Code::RoundInvalid);
        assert!(e.message.contains("round 2 of turn"), "{}", e.message);
        assert!(
            e.message.contains("assistant nests deeper than 128 levels"),
            "{}",
            e.message
        );
    }
}
