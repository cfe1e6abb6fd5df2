-- pgprompt: write-time refusals (docs/design.md, "Seals"; README, "Refused on write") as triggers, and the comments that make
-- \d+ and \df+ explain themselves. Runs after the extension's functions exist.

-- The wires are the library's (core/src/wire/, Wire::ALL): a wire it does not know is
-- refused, and a new wire changes no list here.
ALTER TABLE prompt.models ADD CONSTRAINT models_wire_valid CHECK (prompt._wire_known(wire));
ALTER TABLE prompt.responses ADD CONSTRAINT responses_shape_valid CHECK (prompt._wire_known(shape));
ALTER TABLE prompt.model_profiles ADD CONSTRAINT model_profiles_wires_valid CHECK (wires <> '{}' AND prompt._wires_known(wires));
-- So are the providers (core/src/kinds.rs, Provider).
ALTER TABLE prompt.model_profiles ADD CONSTRAINT model_profiles_provider_valid CHECK (prompt._provider_known(provider));
ALTER TABLE prompt.models ADD CONSTRAINT models_provider_valid CHECK (provider IS NULL OR prompt._dialect_known(wire, provider));

-- The tokenizers whose counts a write stores: those of the models in use.
-- PL/pgSQL, not SQL: a SQL function with a SET clause is parsed and planned again at every
-- call, and the turns trigger calls this one on every write of a turn's text (measured:
-- 0.05 ms of record_response's 0.8 ms; a PL/pgSQL function keeps its plan for the session).
CREATE FUNCTION prompt._tokenizers_in_use() RETURNS text[]
LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$ BEGIN
    RETURN (SELECT coalesce(array_agg(DISTINCT tokenizer ORDER BY tokenizer), ARRAY['cl100k_base']) FROM prompt.models);
END $$;

-- The profile a model follows (its JSON, as core/src/profile.rs reads it), as a row (none:
-- no profile): the one its row names, else the one whose name is the model's name or the
-- longest prefix of it. A name matches a profile whole, or by the longest profile name
-- followed in it by '-' (a dated or suffixed id): gpt-5-mini-2025-08-07 is gpt-5's,
-- gpt-5.6-cyber is not. A function the planner inlines into the query that calls it from
-- FROM (a compile's model read runs no statement of its own for it): SQL-standard, its
-- body bound when it is created, so no search_path is set (one would stop the inlining).
-- `OFFSET 0` keeps it a subquery: pulled up, it ran once per reference to its column.
-- The candidates are the id itself and its '-'-prefixes (gpt-5-mini-2025-08-07: gpt,
-- gpt-5, gpt-5-mini, ...) within its first 512 characters (bounded work for any id; a
-- profile name is a few dozen), each looked up by the primary key: comparing the id with
-- every profile was most of a compile's model read (0.05 ms of it, bench/NOTES.md); the
-- same profile is found (a test holds the two rules equal over every profile's name and
-- variants of it).
CREATE FUNCTION prompt._model_profile_of(model_name text, profile_name text) RETURNS TABLE (profile text)
LANGUAGE sql STABLE PARALLEL SAFE
BEGIN ATOMIC
    -- A Bedrock cross-region inference profile (us.amazon.nova-pro-v1:0, global.anthropic.…)
    -- is its model's id behind a geography: matched as the id. Other spellings of an id
    -- are matched as the id too (a retired model is refused however it is spelled): in
    -- another case, with spaces or invisible characters, Vertex's @date for -date, an
    -- Ollama-style :latest.
    SELECT (to_jsonb(p) - 'imported')::text FROM prompt.model_profiles p
     WHERE p.name = coalesce(profile_name, (SELECT q.name FROM prompt.model_profiles q
                                   WHERE q.name = ANY (ARRAY(
                                         WITH k (id) AS (VALUES (model_name), (lower(regexp_replace(regexp_replace(regexp_replace(
                                                  model_name, '[[:space:]\u00ad\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2064\ufeff]', '', 'g'),
                                                  '@', '-', 'g'), ':latest$', '')))),
                                              n (id) AS (SELECT k.id FROM k
                                                         UNION SELECT regexp_replace(k.id, '^(us|eu|apac|global|us-gov|jp|au|ca)[.](?=[a-z]+[.])', '') FROM k)
                                         SELECT n.id FROM n
                                         UNION ALL
                                         SELECT array_to_string(a[1:i], '-')
                                           FROM n, LATERAL string_to_array(left(n.id, 512), '-') a,
                                                LATERAL generate_series(1, cardinality(a) - 1) i))
                                   ORDER BY length(q.name) DESC, q.name LIMIT 1))
     OFFSET 0;
END;

-- The same, as a value (NULL: no profile).
CREATE FUNCTION prompt._model_profile(model_name text, profile_name text) RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$ SELECT profile FROM prompt._model_profile_of($1, $2) $$;

CREATE FUNCTION prompt._documents_write() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM prompt._check_document(NEW.name, NEW.body);
    IF TG_OP = 'UPDATE' THEN
        NEW.version := OLD.version + 1;
        NEW.updated_at := now();
    ELSIF NOT prompt._restores() THEN
        -- A new document: its history's next version (a document deleted and written again
        -- under its id continues its history), written now; a restore keeps its own.
        NEW.version := prompt._document_first_version(NEW.id, NEW.version);
        NEW.updated_at := now();
    END IF;
    RETURN NEW;
END
$$;

CREATE TRIGGER documents_write BEFORE INSERT OR UPDATE ON prompt.documents
    FOR EACH ROW EXECUTE FUNCTION prompt._documents_write();

-- Prompt history: each write of a document leaves its version in prompt.document_versions,
-- written by pgprompt's own writer (src/pg/triggers.rs), as the document was written.
CREATE FUNCTION prompt._documents_versioned() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM prompt._document_version(NEW.id);
    RETURN NULL;
END
$$;

CREATE TRIGGER documents_versioned AFTER INSERT OR UPDATE ON prompt.documents
    FOR EACH ROW EXECUTE FUNCTION prompt._documents_versioned();

-- A document's versions are pgprompt's to write: an INSERT by its writer (or an
-- administrator's restore), never an UPDATE; they outlive their document, and a DELETE or
-- a TRUNCATE needs a permitted history rewrite.
CREATE FUNCTION prompt._document_versions_write() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF TG_OP = 'DELETE' AND prompt._history_rewrite_allowed() THEN
        RETURN OLD;
    END IF;
    PERFORM prompt._storage_guard(format('version %s of document %s', coalesce(NEW.version, OLD.version),
                                         coalesce(NEW.document_id, OLD.document_id)), TG_OP);
    IF TG_OP = 'DELETE' THEN
        RETURN OLD;
    END IF;
    -- A restore's document recorded its version as it came in: the dump's row of it
    -- brings back its author, and goes in no second time.
    IF TG_OP = 'INSERT' AND prompt._document_version_recorded(NEW.document_id, NEW.version, NEW.role, NEW.body,
                                                              NEW.written_at, NEW.written_by::oid) THEN
        RETURN NULL;
    END IF;
    RETURN NEW;
END
$$;

CREATE TRIGGER document_versions_guard BEFORE INSERT OR UPDATE OR DELETE ON prompt.document_versions
    FOR EACH ROW EXECUTE FUNCTION prompt._document_versions_write();

-- An earlier version of a document written again as its newest (its macros checked again,
-- its version bumped, that write kept in the history too). Runs as the caller: the
-- document's own grants and row-level security decide.
CREATE FUNCTION prompt.restore_document(document_id uuid, version int) RETURNS int
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    old record;
    now_at int;
BEGIN
    SELECT v.role, v.body INTO old FROM prompt.document_versions v WHERE v.document_id = $1 AND v.version = $2;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'no_data_found',
            MESSAGE = format('document_version_not_found: document %s has no version %s', $1, $2),
            HINT = 'SELECT version, written_at, written_by FROM prompt.document_versions WHERE document_id = ... lists its versions.';
    END IF;
    UPDATE prompt.documents d SET role = old.role, body = old.body WHERE d.id = $1 RETURNING d.version INTO now_at;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'insufficient_privilege',
            MESSAGE = format('document_not_writable: document %s is gone, or not one this role may write', $1),
            HINT = 'A restore is a write of the document: the role needs UPDATE on prompt.documents and, under tenancy, the document''s workspace.';
    END IF;
    RETURN now_at;
END
$$;

CREATE FUNCTION prompt._users_write() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF TG_OP = 'INSERT'
       OR NEW.prompt_template IS DISTINCT FROM OLD.prompt_template
       OR NEW.prompt_mechanism IS DISTINCT FROM OLD.prompt_mechanism THEN
        PERFORM prompt._check_template(NEW.handle, NEW.prompt_mechanism, NEW.prompt_template);
    END IF;
    RETURN NEW;
END
$$;

CREATE TRIGGER users_write BEFORE INSERT OR UPDATE ON prompt.users
    FOR EACH ROW EXECUTE FUNCTION prompt._users_write();

CREATE FUNCTION prompt._workspaces_write() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    BEGIN
        PERFORM now() AT TIME ZONE NEW.timezone;
    EXCEPTION WHEN invalid_parameter_value THEN
        PERFORM prompt._refuse_timezone(NEW.timezone);
    END;
    RETURN NEW;
END
$$;

CREATE TRIGGER workspaces_write BEFORE INSERT OR UPDATE OF timezone ON prompt.workspaces
    FOR EACH ROW EXECUTE FUNCTION prompt._workspaces_write();

CREATE FUNCTION prompt._touch_updated_at() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    NEW.updated_at := now();
    RETURN NEW;
END
$$;

CREATE TRIGGER memories_touch BEFORE UPDATE ON prompt.memories
    FOR EACH ROW EXECUTE FUNCTION prompt._touch_updated_at();
CREATE TRIGGER skills_touch BEFORE UPDATE ON prompt.skills
    FOR EACH ROW EXECUTE FUNCTION prompt._touch_updated_at();

-- Whether this transaction rewrites history on purpose (SET LOCAL
-- pgprompt.allow_history_rewrite = on, by a role that may): only then may a sealed turn,
-- a turn a later seal replayed, or a round a continuation sent be deleted or rewritten.
-- prompt._history_rewrite_allowed() is the library's (src/pg/guard.rs): on for a role an
-- administrator has not named, it refuses with 42501.

CREATE FUNCTION prompt._turns_write() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    tokenizers text[];
    changed text;
BEGIN
    IF TG_OP = 'INSERT' AND NEW.seq IS NULL THEN
        -- One writer of a conversation's next seq at a time: a lock on the conversation's
        -- row, which only a role that may write the conversation can take (an advisory lock
        -- on a key anyone can compute would let anyone block it).
        PERFORM prompt._lock_conversation(NEW.conversation_id);
        NEW.seq := coalesce((SELECT max(seq) FROM prompt.turns WHERE conversation_id = NEW.conversation_id), 0) + 1;
    END IF;
    -- A turn's seal is written by sealing alone (a restore by an administrator brings
    -- sealed turns back as they were).
    IF TG_OP = 'INSERT' AND (NEW.sealed_at IS NOT NULL OR NEW.sealed_preface IS NOT NULL OR NEW.sealed_catalog IS NOT NULL
                             OR NEW.sealed_mechanism IS NOT NULL OR NEW.sealed_versions IS NOT NULL) THEN
        PERFORM prompt._storage_guard(format('turn %s of conversation %s is sealed', NEW.id, NEW.conversation_id), 'INSERT');
    END IF;
    IF TG_OP = 'UPDATE' AND OLD.sealed_at IS NULL
       AND (NEW.sealed_at IS NOT NULL OR NEW.sealed_preface IS DISTINCT FROM OLD.sealed_preface
            OR NEW.sealed_catalog IS DISTINCT FROM OLD.sealed_catalog OR NEW.sealed_mechanism IS DISTINCT FROM OLD.sealed_mechanism
            OR NEW.sealed_versions IS DISTINCT FROM OLD.sealed_versions) THEN
        PERFORM prompt._storage_guard(format('the seal of turn %s of conversation %s', OLD.id, OLD.conversation_id), 'UPDATE');
    END IF;
    -- A turn is marked sent by the seal that first sent it (a later turn's), with the
    -- digest of what was sent of it: by sealing alone (a restore by an administrator
    -- brings the marks back as they were).
    IF (TG_OP = 'INSERT' AND (NEW.sent_at IS NOT NULL OR NEW.sent_digest IS NOT NULL))
       OR (TG_OP = 'UPDATE' AND (NEW.sent_at IS DISTINCT FROM OLD.sent_at OR NEW.sent_digest IS DISTINCT FROM OLD.sent_digest)) THEN
        PERFORM prompt._storage_guard(format('the sent mark of turn %s of conversation %s', NEW.id, NEW.conversation_id), TG_OP);
    END IF;
    IF TG_OP = 'UPDATE' AND OLD.sent_at IS NOT NULL THEN
        -- What a later seal sent of the turn never changes, unless this transaction
        -- rewrites history on purpose. An answer that came after it may be filled in (the
        -- next seal writes the digest anew); an in-turn summary may not: it would stand
        -- in for what was sent of the turn.
        changed := CASE
            WHEN NEW.kind                   IS DISTINCT FROM OLD.kind                   THEN 'kind'
            WHEN NEW.role                   IS DISTINCT FROM OLD.role                   THEN 'role'
            WHEN NEW.author_id              IS DISTINCT FROM OLD.author_id              THEN 'author_id'
            WHEN NEW.answerer_id            IS DISTINCT FROM OLD.answerer_id            THEN 'answerer_id'
            WHEN NEW.poster_id              IS DISTINCT FROM OLD.poster_id              THEN 'poster_id'
            WHEN NEW.prompt                 IS DISTINCT FROM OLD.prompt                 THEN 'prompt'
            WHEN NEW.origin                 IS DISTINCT FROM OLD.origin                 THEN 'origin'
            WHEN NEW.sender_conversation_id IS DISTINCT FROM OLD.sender_conversation_id THEN 'sender_conversation_id'
            WHEN NEW.mode                   IS DISTINCT FROM OLD.mode                   THEN 'mode'
            WHEN NEW.inline                 IS DISTINCT FROM OLD.inline                 THEN 'inline'
            WHEN NEW.variables              IS DISTINCT FROM OLD.variables              THEN 'variables'
            WHEN NEW.input                  IS DISTINCT FROM OLD.input                  THEN 'input'
            WHEN NEW.tools                  IS DISTINCT FROM OLD.tools                  THEN 'tools'
            WHEN NEW.callables              IS DISTINCT FROM OLD.callables              THEN 'callables'
            WHEN NEW.model                  IS DISTINCT FROM OLD.model                  THEN 'model'
            WHEN NEW.history                IS DISTINCT FROM OLD.history                THEN 'history'
            WHEN NEW.memory_user_id         IS DISTINCT FROM OLD.memory_user_id         THEN 'memory_user_id'
            WHEN NEW.request_options        IS DISTINCT FROM OLD.request_options        THEN 'request_options'
            WHEN NEW.created_at             IS DISTINCT FROM OLD.created_at             THEN 'created_at'
            WHEN NEW.summary                IS DISTINCT FROM OLD.summary                THEN 'summary'
            WHEN NEW.summary_round          IS DISTINCT FROM OLD.summary_round          THEN 'summary_round'
            WHEN OLD.content IS NOT NULL AND NEW.content IS DISTINCT FROM OLD.content   THEN 'content'
        END;
        IF changed IS NOT NULL AND NOT prompt._history_rewrite_allowed() THEN
            PERFORM prompt._refuse_sealed(OLD.conversation_id, OLD.id, 'sent:' || changed, true);
        END IF;
        IF changed IS NOT NULL OR NEW.content IS DISTINCT FROM OLD.content THEN
            NEW.sent_digest := NULL;
        END IF;
    END IF;
    IF TG_OP = 'UPDATE' AND OLD.sealed_at IS NOT NULL THEN
        -- What was sent never changes: the seal's own columns, and every column the seal
        -- was compiled from, unless this transaction rewrites history on purpose. The
        -- answer (content) and an in-turn summary stay writable.
        changed := CASE
            WHEN NEW.sealed_at        IS DISTINCT FROM OLD.sealed_at        THEN 'sealed_at'
            WHEN NEW.sealed_preface   IS DISTINCT FROM OLD.sealed_preface   THEN 'sealed_preface'
            WHEN NEW.sealed_catalog   IS DISTINCT FROM OLD.sealed_catalog   THEN 'sealed_catalog'
            WHEN NEW.sealed_mechanism IS DISTINCT FROM OLD.sealed_mechanism THEN 'sealed_mechanism'
            WHEN NEW.sealed_versions  IS DISTINCT FROM OLD.sealed_versions  THEN 'sealed_versions'
        END;
        IF changed IS NOT NULL THEN
            PERFORM prompt._refuse_sealed(OLD.conversation_id, OLD.id, changed, false);
        END IF;
        changed := CASE
            WHEN NEW.prompt          IS DISTINCT FROM OLD.prompt          THEN 'prompt'
            WHEN NEW.inline          IS DISTINCT FROM OLD.inline          THEN 'inline'
            WHEN NEW.variables       IS DISTINCT FROM OLD.variables       THEN 'variables'
            WHEN NEW.input           IS DISTINCT FROM OLD.input           THEN 'input'
            WHEN NEW.tools           IS DISTINCT FROM OLD.tools           THEN 'tools'
            WHEN NEW.callables       IS DISTINCT FROM OLD.callables       THEN 'callables'
            WHEN NEW.model           IS DISTINCT FROM OLD.model           THEN 'model'
            WHEN NEW.mode            IS DISTINCT FROM OLD.mode            THEN 'mode'
            WHEN NEW.answerer_id     IS DISTINCT FROM OLD.answerer_id     THEN 'answerer_id'
            WHEN NEW.poster_id       IS DISTINCT FROM OLD.poster_id       THEN 'poster_id'
            WHEN NEW.history         IS DISTINCT FROM OLD.history         THEN 'history'
            WHEN NEW.memory_user_id  IS DISTINCT FROM OLD.memory_user_id  THEN 'memory_user_id'
            WHEN NEW.seq             IS DISTINCT FROM OLD.seq             THEN 'seq'
            WHEN NEW.kind            IS DISTINCT FROM OLD.kind            THEN 'kind'
            WHEN NEW.request_options IS DISTINCT FROM OLD.request_options THEN 'request_options'
            WHEN NEW.conversation_id IS DISTINCT FROM OLD.conversation_id THEN 'conversation_id'
        END;
        IF changed IS NOT NULL AND NOT prompt._history_rewrite_allowed() THEN
            PERFORM prompt._refuse_sealed(OLD.conversation_id, OLD.id, changed, true);
        END IF;
    END IF;
    IF TG_OP = 'INSERT'
       OR NEW.kind      IS DISTINCT FROM OLD.kind
       OR NEW.role      IS DISTINCT FROM OLD.role
       OR NEW.poster_id IS DISTINCT FROM OLD.poster_id
       OR NEW.mode      IS DISTINCT FROM OLD.mode THEN
        PERFORM prompt._check_turn_shape(NEW.id, NEW.kind, NEW.role, NEW.poster_id, NEW.mode,
            TG_OP = 'UPDATE' AND NEW.mode IS DISTINCT FROM OLD.mode
            AND EXISTS (SELECT 1 FROM prompt.rounds r WHERE r.conversation_id = NEW.conversation_id AND r.turn_id = NEW.id));
    END IF;
    IF NEW.memory_user_id IS NOT NULL
       AND (TG_OP = 'INSERT' OR NEW.memory_user_id IS DISTINCT FROM OLD.memory_user_id)
       AND NOT EXISTS (SELECT 1 FROM prompt.users u WHERE u.id = NEW.memory_user_id AND u.kind = 'human') THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = format('turn_field_invalid: memory_user_id of turn %s names %s, which is not a Human at /memory_user_id',
                             NEW.id, NEW.memory_user_id),
            HINT = 'memory_user_id selects a Human whose user memory and skills the turn reads; an agent''s are its own.';
    END IF;
    IF TG_OP = 'INSERT'
       OR NEW.inline          IS DISTINCT FROM OLD.inline
       OR NEW.variables       IS DISTINCT FROM OLD.variables
       OR NEW.history         IS DISTINCT FROM OLD.history
       OR NEW.input           IS DISTINCT FROM OLD.input
       OR NEW.tools           IS DISTINCT FROM OLD.tools
       OR NEW.callables       IS DISTINCT FROM OLD.callables
       OR NEW.request_options IS DISTINCT FROM OLD.request_options THEN
        PERFORM prompt._check_turn(NEW.inline::text, NEW.variables::text, NEW.history::text,
                                   NEW.input::text, NEW.tools::text, NEW.callables::text,
                                   NEW.request_options::text);
    END IF;
    IF NEW.request_options <> '{}'::jsonb AND NEW.model IS NOT NULL
       AND (TG_OP = 'INSERT' OR NEW.request_options IS DISTINCT FROM OLD.request_options
            OR NEW.model IS DISTINCT FROM OLD.model) THEN
        PERFORM prompt._check_options_wire('turn', NEW.request_options::text, m.wire, m.max_output_tokens,
                                           m.name, prompt._model_profile(m.name, m.profile), m.provider, m.native_images)
           FROM prompt.models m WHERE m.name = NEW.model;
    END IF;
    IF TG_OP = 'INSERT'
       OR NEW.content IS DISTINCT FROM OLD.content
       OR NEW.prompt  IS DISTINCT FROM OLD.prompt
       OR NEW.kind    IS DISTINCT FROM OLD.kind
       -- Counts are the trigger's: a write of its own is counted again.
       OR NEW.content_tokens IS DISTINCT FROM OLD.content_tokens
       OR NEW.prompt_tokens  IS DISTINCT FROM OLD.prompt_tokens THEN
        tokenizers := prompt._tokenizers_in_use();
        NEW.content_tokens := prompt._row_tokens(NEW.kind, NEW.content, tokenizers);
        NEW.prompt_tokens := prompt._row_tokens('message', NEW.prompt, tokenizers);
    END IF;
    IF NEW.kind <> 'reply' THEN
        NEW.own_entries := 1;
    ELSIF TG_OP = 'INSERT'
       OR NEW.kind          IS DISTINCT FROM OLD.kind
       OR NEW.content       IS DISTINCT FROM OLD.content
       OR NEW.summary       IS DISTINCT FROM OLD.summary
       OR NEW.summary_round IS DISTINCT FROM OLD.summary_round
       OR NEW.own_entries   IS DISTINCT FROM OLD.own_entries THEN
        NEW.own_entries := prompt._own_entries(NEW.summary, NEW.summary_round, NEW.content,
            ARRAY(SELECT n FROM prompt.rounds r WHERE r.conversation_id = NEW.conversation_id AND r.turn_id = NEW.id));
    END IF;
    RETURN NEW;
END
$$;

CREATE TRIGGER turns_write BEFORE INSERT OR UPDATE ON prompt.turns
    FOR EACH ROW EXECUTE FUNCTION prompt._turns_write();

-- A sealed turn, or a turn a later seal replayed, is deleted only on purpose; a whole
-- conversation's turns go with it (the cascade of its delete: the conversation is gone).
-- Whether a later seal replayed the turn, or the conversation is gone, is looked up
-- whatever the caller's row-level security lets it see.
CREATE FUNCTION prompt._turns_delete() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF prompt._parent_gone(OLD.conversation_id, NULL) THEN
        RETURN OLD;
    END IF;
    IF OLD.sealed_at IS NOT NULL THEN
        IF NOT prompt._history_rewrite_allowed() THEN
            PERFORM prompt._refuse_sealed(OLD.conversation_id, OLD.id, 'delete', true);
        END IF;
    ELSIF OLD.sent_at IS NOT NULL AND NOT prompt._history_rewrite_allowed() THEN
        PERFORM prompt._refuse_sealed(OLD.conversation_id, OLD.id, 'delete_replayed', true);
    END IF;
    RETURN OLD;
END
$$;

CREATE TRIGGER turns_delete BEFORE DELETE ON prompt.turns
    FOR EACH ROW EXECUTE FUNCTION prompt._turns_delete();

CREATE FUNCTION prompt._rounds_write() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    -- A sent round goes with its turn (the cascade of its delete: the turn is gone), or
    -- on purpose. A round is sent when a request carried it: its own turn's continuation
    -- (sent_at, with the digest of what was sent), or a later turn's seal that sent it in
    -- history (the digest alone). Only pgprompt marks a round; an administrator's restore
    -- brings sent rounds back as they were.
    IF TG_OP IN ('UPDATE', 'DELETE') AND (OLD.sent_at IS NOT NULL OR OLD.sent_digest IS NOT NULL)
       AND (TG_OP = 'DELETE' OR (NEW.assistant, NEW.results, NEW.steers, NEW.aborted)
                                IS DISTINCT FROM (OLD.assistant, OLD.results, OLD.steers, OLD.aborted)
            -- What the request that sent it cleared is sent too.
            OR (OLD.sent_at IS NOT NULL AND NEW.cleared IS DISTINCT FROM OLD.cleared))
       AND NOT (TG_OP = 'DELETE' AND prompt._parent_gone(OLD.conversation_id, OLD.turn_id))
       AND NOT prompt._history_rewrite_allowed() THEN
        PERFORM prompt._refuse_sent_round(OLD.conversation_id, OLD.turn_id, OLD.n, lower(TG_OP));
    END IF;
    IF TG_OP = 'DELETE' THEN
        RETURN OLD;
    END IF;
    IF (TG_OP = 'INSERT' AND (NEW.sent_at IS NOT NULL OR NEW.sent_digest IS NOT NULL OR NEW.sent_estimate IS NOT NULL
                              OR NEW.cleared IS NOT NULL OR NEW.sent_layout IS NOT NULL))
       OR (TG_OP = 'UPDATE'
           AND (NEW.sent_at IS DISTINCT FROM OLD.sent_at OR NEW.sent_digest IS DISTINCT FROM OLD.sent_digest
                OR NEW.sent_estimate IS DISTINCT FROM OLD.sent_estimate OR NEW.cleared IS DISTINCT FROM OLD.cleared
                OR NEW.sent_layout IS DISTINCT FROM OLD.sent_layout)) THEN
        PERFORM prompt._storage_guard(format('round %s of turn %s of conversation %s', NEW.n, NEW.turn_id, NEW.conversation_id),
                                      TG_OP);
    END IF;
    IF TG_OP = 'INSERT'
       OR NEW.assistant IS DISTINCT FROM OLD.assistant
       OR NEW.results   IS DISTINCT FROM OLD.results
       OR NEW.steers    IS DISTINCT FROM OLD.steers
       OR NEW.n         IS DISTINCT FROM OLD.n THEN
        PERFORM prompt._check_round(NEW.turn_id, NEW.n, NEW.assistant::text, NEW.results::text, NEW.steers::text);
    END IF;
    RETURN NEW;
END
$$;

CREATE TRIGGER rounds_write BEFORE INSERT OR UPDATE OR DELETE ON prompt.rounds
    FOR EACH ROW EXECUTE FUNCTION prompt._rounds_write();

-- What only pgprompt writes of a round, checked again once every BEFORE trigger has run: a
-- trigger that is not pgprompt's (a careless grant of every privilege includes TRIGGER) fires after
-- rounds_write when its name sorts later, and could set a sent mark or a clearing record
-- on the row the writer inserts.
CREATE FUNCTION prompt._rounds_stored() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF (TG_OP = 'INSERT' AND (NEW.sent_at IS NOT NULL OR NEW.sent_digest IS NOT NULL OR NEW.sent_estimate IS NOT NULL
                              OR NEW.cleared IS NOT NULL OR NEW.sent_layout IS NOT NULL))
       OR (TG_OP = 'UPDATE'
           AND ((NEW.sent_at, NEW.sent_digest, NEW.sent_estimate, NEW.cleared, NEW.sent_layout)
                IS DISTINCT FROM (OLD.sent_at, OLD.sent_digest, OLD.sent_estimate, OLD.cleared, OLD.sent_layout)
                OR ((OLD.sent_at IS NOT NULL OR OLD.sent_digest IS NOT NULL)
                    AND (NEW.assistant, NEW.results, NEW.steers, NEW.aborted)
                        IS DISTINCT FROM (OLD.assistant, OLD.results, OLD.steers, OLD.aborted)
                    AND NOT prompt._history_rewrite_allowed()))) THEN
        PERFORM prompt._storage_guard(format('round %s of turn %s of conversation %s', NEW.n, NEW.turn_id, NEW.conversation_id),
                                      TG_OP);
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER rounds_stored AFTER INSERT OR UPDATE ON prompt.rounds
    FOR EACH ROW EXECUTE FUNCTION prompt._rounds_stored();

-- TRUNCATE of the timeline while it holds what was sent needs a permitted rewrite.
CREATE FUNCTION prompt._history_truncate() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM prompt._truncate_guard(TG_TABLE_NAME);
    RETURN NULL;
END
$$;

CREATE TRIGGER turns_truncate BEFORE TRUNCATE ON prompt.turns
    FOR EACH STATEMENT EXECUTE FUNCTION prompt._history_truncate();
CREATE TRIGGER rounds_truncate BEFORE TRUNCATE ON prompt.rounds
    FOR EACH STATEMENT EXECUTE FUNCTION prompt._history_truncate();

-- Seal storage is what was sent: it changes only through pgprompt's own writer (sealing,
-- prune_seals, the 0.2 conversion; src/pg/guard.rs), or goes with what it belongs to
-- (the cascade of deleting a conversation, or a sealed turn under a permitted history
-- rewrite: the conversation or turn is gone). An administrator's INSERT is a restore;
-- TRUNCATE needs a permitted rewrite. TG_ARGV[0]: what the row belongs to.
CREATE FUNCTION prompt._seal_storage_write() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        -- (Two statements: a row of seal_nodes has no turn_id to name.)
        IF TG_ARGV[0] = 'turn' THEN
            IF prompt._parent_gone(OLD.conversation_id, OLD.turn_id) THEN
                RETURN OLD;
            END IF;
        ELSIF prompt._parent_gone(OLD.conversation_id, NULL) THEN
            RETURN OLD;
        END IF;
    END IF;
    PERFORM prompt._storage_guard('prompt.' || TG_TABLE_NAME, TG_OP);
    IF TG_OP = 'DELETE' THEN
        RETURN OLD;
    END IF;
    RETURN NEW;
END
$$;

CREATE FUNCTION prompt._seal_storage_statement() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM prompt._storage_guard('prompt.' || TG_TABLE_NAME, TG_OP);
    RETURN NULL;
END
$$;

CREATE TRIGGER seals_guard BEFORE UPDATE OR DELETE ON prompt.seals
    FOR EACH ROW EXECUTE FUNCTION prompt._seal_storage_write('turn');
CREATE TRIGGER seals_statement BEFORE INSERT OR TRUNCATE ON prompt.seals
    FOR EACH STATEMENT EXECUTE FUNCTION prompt._seal_storage_statement();
CREATE TRIGGER seal_nodes_guard BEFORE UPDATE OR DELETE ON prompt.seal_nodes
    FOR EACH ROW EXECUTE FUNCTION prompt._seal_storage_write('conversation');
CREATE TRIGGER seal_nodes_statement BEFORE INSERT OR TRUNCATE ON prompt.seal_nodes
    FOR EACH STATEMENT EXECUTE FUNCTION prompt._seal_storage_statement();
CREATE TRIGGER seals_02_guard BEFORE UPDATE OR DELETE ON prompt.seals_02
    FOR EACH ROW EXECUTE FUNCTION prompt._seal_storage_write('turn');
CREATE TRIGGER seals_02_statement BEFORE INSERT OR TRUNCATE ON prompt.seals_02
    FOR EACH STATEMENT EXECUTE FUNCTION prompt._seal_storage_statement();
-- A document's history is truncated under a permitted history rewrite only.
CREATE TRIGGER document_versions_truncate BEFORE TRUNCATE ON prompt.document_versions
    FOR EACH STATEMENT EXECUTE FUNCTION prompt._seal_storage_statement();

-- Rounds belong to run reply turns and are numbered 1, 2, 3, ... without a gap. Checked
-- after the statement's rows are all in, so a restore may load them in any order.
CREATE FUNCTION prompt._rounds_placed() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t record;
BEGIN
    SELECT kind, mode INTO t FROM prompt.turns
     WHERE conversation_id = NEW.conversation_id AND id = NEW.turn_id;
    PERFORM prompt._check_round_place(NEW.turn_id, NEW.n, t.kind, t.mode,
        NEW.n = 1 OR EXISTS (SELECT 1 FROM prompt.rounds r WHERE r.conversation_id = NEW.conversation_id
                             AND r.turn_id = NEW.turn_id AND r.n = NEW.n - 1));
    RETURN NULL;
END
$$;

CREATE TRIGGER rounds_placed AFTER INSERT OR UPDATE OF n, turn_id ON prompt.rounds
    FOR EACH ROW EXECUTE FUNCTION prompt._rounds_placed();

-- A round added or removed changes its turn's entry count.
CREATE FUNCTION prompt._rounds_count() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    r record;
    ns int[];
BEGIN
    IF TG_OP = 'DELETE' THEN r := OLD; ELSE r := NEW; END IF;
    -- Two statements keyed by the conversation, not one correlated UPDATE: on Citus each
    -- is then a query on this shard, which a trigger there may run.
    ns := ARRAY(SELECT x.n FROM prompt.rounds x WHERE x.conversation_id = r.conversation_id AND x.turn_id = r.turn_id);
    UPDATE prompt.turns t
       SET own_entries = prompt._own_entries(t.summary, t.summary_round, t.content, ns)
     WHERE t.conversation_id = r.conversation_id AND t.id = r.turn_id;
    RETURN NULL;
END
$$;

CREATE TRIGGER rounds_count AFTER INSERT OR DELETE OR UPDATE OF n ON prompt.rounds
    FOR EACH ROW EXECUTE FUNCTION prompt._rounds_count();

-- Identities never change (README, "Security"): no row's key takes an UPDATE, so nothing a
-- statement does to one row (a rename in a writable CTE, an ON UPDATE action) makes another
-- row's delete look like its parent's cascade, and a seal names the turns it names for
-- good. An AFTER trigger: it sees each row as written, whatever a BEFORE trigger made of
-- it; its WHEN runs in the executor, so an update that leaves the keys alone queues
-- nothing. TG_ARGV: the key columns.
CREATE FUNCTION prompt._keys_fixed() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    k text;
    was jsonb := to_jsonb(OLD);
    now_ jsonb := to_jsonb(NEW);
BEGIN
    FOREACH k IN ARRAY TG_ARGV LOOP
        IF was -> k IS DISTINCT FROM now_ -> k THEN
            RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
                MESSAGE = format('key_immutable: %s of a row of prompt.%s never changes (%s, not %s)',
                                 k, TG_TABLE_NAME, was ->> k, now_ ->> k),
                DETAIL = 'A row''s key is its identity: seals, rounds, responses and tenancy name rows by it.',
                HINT = 'Insert a row under the new key instead (and delete the old one where that is allowed).';
        END IF;
    END LOOP;
    RETURN NULL;
END
$$;

DO $keys$
DECLARE
    -- table => its key columns
    keys constant text[][] := ARRAY[
        ['model_profiles', 'name'], ['models', 'name'], ['users', 'id'], ['workspaces', 'id'], ['documents', 'id'],
        ['conversations', 'id'], ['memories', 'id'], ['skills', 'id'], ['turns', 'conversation_id,id,seq'],
        ['rounds', 'conversation_id,turn_id,n'], ['seal_nodes', 'conversation_id,id'], ['seals', 'conversation_id,turn_id'],
        ['seals_02', 'conversation_id,turn_id'], ['responses', 'conversation_id,turn_id,step'],
        ['counts', 'conversation_id,turn_id,step'], ['tenants', 'role_name,workspace_id'], ['administrators', 'role_name'],
        ['workspace_members', 'workspace_id,user_id'], ['document_versions', 'document_id,version']];
    k text[];
BEGIN
    FOREACH k SLICE 1 IN ARRAY keys LOOP
        EXECUTE format('CREATE TRIGGER %1$I AFTER UPDATE ON prompt.%2$I FOR EACH ROW WHEN (%3$s) '
                       'EXECUTE FUNCTION prompt._keys_fixed(%4$s)',
                       k[1] || '_keys', k[1],
                       (SELECT string_agg(format('OLD.%1$I IS DISTINCT FROM NEW.%1$I', c), ' OR ')
                          FROM unnest(string_to_array(k[2], ',')) AS c),
                       (SELECT string_agg(quote_literal(c), ', ') FROM unnest(string_to_array(k[2], ',')) AS c));
    END LOOP;
END
$keys$;

-- A Side answers as its captured turn's answerer: filled in when not given, refused
-- when another. A capture that names no turn of the parent is refused unless the row
-- already names its answerer (as pg_dump's restore does, conversations before turns).
CREATE FUNCTION prompt._conversations_capture() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    found_answerer uuid;
    found_content text;
    found_summary text;
    found_summary_round int;
    found_round int;
    found_cleared jsonb;
    captured boolean;
BEGIN
    -- What a Side read of its captured turn is the capture's own: written here, never by
    -- an ordinary UPDATE, and captured again only before the Side sealed a turn (or under
    -- a permitted history rewrite).
    IF TG_OP = 'UPDATE'
       AND (NEW.captured_round IS DISTINCT FROM OLD.captured_round OR NEW.captured_content IS DISTINCT FROM OLD.captured_content
            OR NEW.captured_summary IS DISTINCT FROM OLD.captured_summary
            OR NEW.captured_summary_round IS DISTINCT FROM OLD.captured_summary_round
            OR NEW.captured_cleared IS DISTINCT FROM OLD.captured_cleared)
       AND NEW.parent_id IS NOT DISTINCT FROM OLD.parent_id AND NEW.captured_turn_id IS NOT DISTINCT FROM OLD.captured_turn_id
       AND NOT prompt._history_rewrite_allowed() THEN
        PERFORM prompt._storage_guard(format('the capture of Side %s', OLD.id), 'UPDATE');
    END IF;
    -- Whose voice each turn was sent in follows the conversation's answerer: once a turn
    -- of it is sealed, the answerer is what was sent (a rewrite on purpose aside).
    IF TG_OP = 'UPDATE' AND NEW.answerer_id IS DISTINCT FROM OLD.answerer_id
       AND EXISTS (SELECT 1 FROM prompt.turns t WHERE t.conversation_id = OLD.id AND t.sealed_at IS NOT NULL)
       AND NOT prompt._history_rewrite_allowed() THEN
        PERFORM prompt._storage_guard(format('the answerer of conversation %s, which sealed a turn', OLD.id), 'UPDATE');
    END IF;
    -- Detaching a Side (parent_id NULL) keeps what it captured as it was.
    IF TG_OP = 'UPDATE' AND NEW.parent_id IS NULL
       AND (NEW.captured_round, NEW.captured_content, NEW.captured_summary, NEW.captured_summary_round, NEW.captured_cleared)
           IS DISTINCT FROM (OLD.captured_round, OLD.captured_content, OLD.captured_summary, OLD.captured_summary_round,
                             OLD.captured_cleared)
       AND NOT prompt._history_rewrite_allowed() THEN
        PERFORM prompt._storage_guard(format('the capture of Side %s', OLD.id), 'UPDATE');
    END IF;
    IF TG_OP = 'UPDATE' AND OLD.captured_turn_id IS NOT NULL AND NEW.parent_id IS NOT NULL
       AND (NEW.parent_id IS DISTINCT FROM OLD.parent_id OR NEW.captured_turn_id IS DISTINCT FROM OLD.captured_turn_id)
       AND EXISTS (SELECT 1 FROM prompt.turns t WHERE t.conversation_id = OLD.id AND t.sealed_at IS NOT NULL)
       AND NOT prompt._history_rewrite_allowed() THEN
        PERFORM prompt._storage_guard(format('the capture of Side %s, which sealed a turn', OLD.id), 'UPDATE');
    END IF;
    -- Not a Side's capture, nothing of it changed, or the parent was deleted (its
    -- parent_id set NULL: the Side keeps its rows and no longer compiles).
    IF NEW.captured_turn_id IS NULL OR NEW.parent_id IS NULL
       OR (TG_OP = 'UPDATE' AND NEW.parent_id IS NOT DISTINCT FROM OLD.parent_id
           AND NEW.captured_turn_id IS NOT DISTINCT FROM OLD.captured_turn_id
           AND NEW.answerer_id IS NOT DISTINCT FROM OLD.answerer_id) THEN
        RETURN NEW;
    END IF;
    SELECT coalesce(t.answerer_id, p.answerer_id), t.content, t.summary, t.summary_round,
           (SELECT max(r.n) FROM prompt.rounds r
             WHERE r.conversation_id = t.conversation_id AND r.turn_id = t.id),
           (SELECT jsonb_agg(r.cleared ORDER BY r.n) FROM prompt.rounds r
             WHERE r.conversation_id = t.conversation_id AND r.turn_id = t.id AND r.cleared IS NOT NULL)
      INTO found_answerer, found_content, found_summary, found_summary_round, found_round, found_cleared
      FROM prompt.turns t JOIN prompt.conversations p ON p.id = t.conversation_id
     WHERE t.conversation_id = NEW.parent_id AND t.id = NEW.captured_turn_id;
    captured := FOUND;
    IF NOT captured THEN
        -- pg_dump's restore writes conversations before turns, answerer_id and the capture
        -- included: an administrator's (a restore), never anyone's to write by hand.
        IF TG_OP = 'UPDATE' OR NEW.answerer_id IS NULL THEN
            RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
                MESSAGE = format('side_invalid: the captured turn %s is not a turn of conversation %s',
                                 NEW.captured_turn_id, NEW.parent_id),
                HINT = 'A Side is captured from a turn of its parent_id.';
        END IF;
        IF NEW.captured_round IS NOT NULL OR NEW.captured_content IS NOT NULL OR NEW.captured_summary IS NOT NULL
           OR NEW.captured_summary_round IS NOT NULL OR NEW.captured_cleared IS NOT NULL THEN
            PERFORM prompt._storage_guard(format('the capture of Side %s', NEW.id), 'INSERT');
        END IF;
    ELSIF found_answerer IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = format('side_invalid: the captured turn %s has no answerer (nor has conversation %s)',
                             NEW.captured_turn_id, NEW.parent_id),
            HINT = 'A Side answers as its captured turn''s answerer: capture a turn that has one.';
    ELSIF NEW.answerer_id IS NOT NULL AND found_answerer <> NEW.answerer_id THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = format('side_invalid: a Side answers as its captured turn''s answerer %s, not %s',
                             found_answerer, NEW.answerer_id),
            HINT = 'Leave answerer_id NULL: it is filled in from the captured turn.';
    END IF;
    IF captured THEN
        NEW.answerer_id := found_answerer;
        -- What the Side reads of its captured turn, from now on.
        IF TG_OP = 'INSERT' OR NEW.parent_id IS DISTINCT FROM OLD.parent_id
           OR NEW.captured_turn_id IS DISTINCT FROM OLD.captured_turn_id THEN
            NEW.captured_content := found_content;
            NEW.captured_summary := found_summary;
            NEW.captured_summary_round := found_summary_round;
            NEW.captured_round := found_round;
            NEW.captured_cleared := found_cleared;
        END IF;
    END IF;
    RETURN NEW;
END
$$;

CREATE TRIGGER conversations_capture BEFORE INSERT OR UPDATE OF parent_id, captured_turn_id, answerer_id,
    captured_round, captured_content, captured_summary, captured_summary_round, captured_cleared
    ON prompt.conversations FOR EACH ROW EXECUTE FUNCTION prompt._conversations_capture();

-- The request options of an agent are checked on write like a turn's (its wire is known only when a turn compiles).
CREATE FUNCTION prompt._options_write() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF TG_OP = 'INSERT' OR NEW.request_options IS DISTINCT FROM OLD.request_options THEN
        PERFORM prompt._check_request_options(TG_TABLE_NAME, NEW.request_options::text);
    END IF;
    IF NEW.request_options <> '{}'::jsonb AND NEW.model IS NOT NULL
       AND (TG_OP = 'INSERT' OR NEW.request_options IS DISTINCT FROM OLD.request_options
            OR NEW.model IS DISTINCT FROM OLD.model) THEN
        PERFORM prompt._check_options_wire('agent', NEW.request_options::text, m.wire, m.max_output_tokens,
                                           m.name, prompt._model_profile(m.name, m.profile), m.provider, m.native_images)
           FROM prompt.models m WHERE m.name = NEW.model;
    END IF;
    RETURN NEW;
END
$$;

-- A model's own options meet its wire and its profile when written: a model row knows
-- both (a profile also names the wires that serve the model and its output limit).
CREATE FUNCTION prompt._model_options_write() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    profile text;
BEGIN
    IF TG_OP = 'INSERT'
       OR NEW.request_options IS DISTINCT FROM OLD.request_options
       OR NEW.wire IS DISTINCT FROM OLD.wire
       OR NEW.max_output_tokens IS DISTINCT FROM OLD.max_output_tokens
       OR NEW.name IS DISTINCT FROM OLD.name
       OR NEW.profile IS DISTINCT FROM OLD.profile
       OR NEW.provider IS DISTINCT FROM OLD.provider
       OR NEW.native_images IS DISTINCT FROM OLD.native_images THEN
        profile := prompt._model_profile(NEW.name, NEW.profile);
        IF NEW.request_options <> '{}'::jsonb OR profile IS NOT NULL OR NEW.provider IS NOT NULL THEN
            PERFORM prompt._check_options_wire('model', NEW.request_options::text, NEW.wire, NEW.max_output_tokens,
                                               NEW.name, profile, NEW.provider, NEW.native_images);
        END IF;
    END IF;
    RETURN NEW;
END
$$;

CREATE TRIGGER models_options BEFORE INSERT OR UPDATE OF request_options, wire, max_output_tokens, name, profile,
    provider, native_images ON prompt.models
    FOR EACH ROW EXECUTE FUNCTION prompt._model_options_write();
CREATE TRIGGER users_options BEFORE INSERT OR UPDATE OF request_options, model ON prompt.users
    FOR EACH ROW EXECUTE FUNCTION prompt._options_write();

-- A model with a tokenizer the stored turns have no counts for says so once, when it
-- is written: until backfill_token_counts runs, compiles count those texts themselves.
CREATE FUNCTION prompt._models_tokenizer() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    slot int := array_position(ARRAY['cl100k_base', 'o200k_base']::text[], NEW.tokenizer);
BEGIN
    IF slot IS NOT NULL AND EXISTS (
        SELECT 1 FROM prompt.turns t
        WHERE (t.content IS NOT NULL AND t.content_tokens[slot] IS NULL)
           OR (t.prompt IS NOT NULL AND t.prompt_tokens[slot] IS NULL)) THEN
        RAISE NOTICE 'model "%" uses %, which stored turns have no token counts for', NEW.name, NEW.tokenizer
            USING HINT = format('CALL prompt.backfill_token_counts(%L) stores them; until then compiles count those texts themselves.', NEW.tokenizer);
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER models_tokenizer AFTER INSERT OR UPDATE OF tokenizer ON prompt.models
    FOR EACH ROW EXECUTE FUNCTION prompt._models_tokenizer();

-- Stored counts for a tokenizer the turns were written without (a model with a new
-- tokenizer was added): filled in batches, each committed, so an interrupted run loses
-- at most one batch and the next run goes on from what is missing. No SET clause: a
-- procedure with one cannot commit. Its first statement pins search_path for the
-- transaction instead, and again after each COMMIT (which ends it), so no name, type or
-- operator resolves outside pg_catalog; every name of the extension's is qualified.
CREATE PROCEDURE prompt.backfill_token_counts(tokenizer text, batch_size int DEFAULT 1000)
LANGUAGE plpgsql
AS $$
DECLARE
    -- Types qualified: a procedure's declarations are read before its first statement pins
    -- search_path, with the caller's (a domain of another role's named uuid would run its
    -- CHECK as whoever calls).
    slot pg_catalog.int4;
    last_c pg_catalog.uuid;
    last_id pg_catalog.uuid;
    seen pg_catalog.int8 := 0;
    counted pg_catalog.int8 := 0;
    batch_seen pg_catalog.int8;
    batch_counted pg_catalog.int8;
BEGIN
    PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
    slot := pg_catalog.array_position(ARRAY['cl100k_base', 'o200k_base']::text[], tokenizer);
    IF slot IS NULL THEN
        PERFORM prompt.count_tokens('', tokenizer);  -- raises tokenizer_unknown (22023)
    END IF;
    IF batch_size IS NULL OR batch_size < 1 THEN
        RAISE EXCEPTION 'batch_size must be at least 1, not %', batch_size
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    LOOP
        WITH batch AS (
            SELECT t.conversation_id, t.id FROM prompt.turns t
            WHERE last_c IS NULL OR (t.conversation_id, t.id) > (last_c, last_id)
            ORDER BY t.conversation_id, t.id
            LIMIT batch_size
        ), done AS (
            UPDATE prompt.turns t SET
                content_tokens = CASE
                    WHEN t.content IS NULL OR t.content_tokens[slot] IS NOT NULL THEN t.content_tokens
                    WHEN slot = 1 THEN ARRAY[(prompt._row_tokens(t.kind, t.content, ARRAY[tokenizer]))[1], t.content_tokens[2]]
                    ELSE ARRAY[t.content_tokens[1], (prompt._row_tokens(t.kind, t.content, ARRAY[tokenizer]))[2]] END,
                prompt_tokens = CASE
                    WHEN t.prompt IS NULL OR t.prompt_tokens[slot] IS NOT NULL THEN t.prompt_tokens
                    WHEN slot = 1 THEN ARRAY[(prompt._row_tokens('message', t.prompt, ARRAY[tokenizer]))[1], t.prompt_tokens[2]]
                    ELSE ARRAY[t.prompt_tokens[1], (prompt._row_tokens('message', t.prompt, ARRAY[tokenizer]))[2]] END
            FROM batch b
            WHERE t.conversation_id = b.conversation_id AND t.id = b.id
              AND ((t.content IS NOT NULL AND t.content_tokens[slot] IS NULL)
                OR (t.prompt IS NOT NULL AND t.prompt_tokens[slot] IS NULL))
            RETURNING 1
        )
        SELECT (SELECT count(*) FROM batch), (SELECT count(*) FROM done), l.conversation_id, l.id
          INTO batch_seen, batch_counted, last_c, last_id
          FROM (SELECT b.conversation_id, b.id FROM batch b ORDER BY b.conversation_id DESC, b.id DESC LIMIT 1) l;
        EXIT WHEN NOT FOUND;
        seen := seen + batch_seen;
        counted := counted + batch_counted;
        COMMIT;
        PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
        RAISE NOTICE 'backfill_token_counts(%): % turns read, % counted', tokenizer, seen, counted;
    END LOOP;
    RAISE NOTICE 'backfill_token_counts(%): done, % turns read, % counted', tokenizer, seen, counted;
END
$$;

-- The 0.2 seals the update moved to prompt.seals_02, converted in batches, each committed
-- with a NOTICE: an interrupted run loses at most one batch, and the next run goes on
-- with what is left. No SET clause: a procedure with one cannot commit; search_path is
-- pinned by its first statement and after each COMMIT, as in backfill_token_counts.
CREATE PROCEDURE prompt.convert_seals_02(batch_size int DEFAULT 100)
LANGUAGE plpgsql
AS $$
DECLARE
    -- Types qualified (as in backfill_token_counts).
    total pg_catalog.int8;
    converted pg_catalog.int8 := 0;
    n pg_catalog.int8;
BEGIN
    PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
    IF batch_size IS NULL OR batch_size < 1 THEN
        RAISE EXCEPTION 'batch_size must be at least 1, not %', batch_size
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    SELECT pg_catalog.count(*) INTO total FROM prompt.seals_02;
    LOOP
        n := prompt._convert_seals_02(NULL, batch_size);
        EXIT WHEN n = 0;
        converted := converted + n;
        COMMIT;
        PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
        RAISE NOTICE 'convert_seals_02: % of % converted', converted, total;
    END LOOP;
    -- Seals another session is converting at the same time are skipped, not waited for.
    SELECT pg_catalog.count(*) INTO total FROM prompt.seals_02;
    IF total > 0 THEN
        RAISE NOTICE 'convert_seals_02: % converted here; % being converted by another session', converted, total;
    ELSE
        RAISE NOTICE 'convert_seals_02: done, % converted', converted;
    END IF;
END
$$;

-- The catalog from the providers' own lists (README, "Model profiles"): what a model-list
-- endpoint returned, as the user pasted or fetched it (the database calls no provider).
-- Each model's row is inserted (its family's rules, or the provider's defaults, with what
-- the list says), updated with what the list says, or kept: a row a user changed since
-- the last import (its columns differ from what that import wrote, or it never came from
-- one and is not shipped) stays as it is unless overwrite.
CREATE FUNCTION prompt._model_list_entry(provider text, entry jsonb, at text) RETURNS jsonb
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    said jsonb := '{}';
    name text;
    caps jsonb;
    modes text[];
    efforts text[];
    lifecycle text;
BEGIN
    IF jsonb_typeof(entry) IS DISTINCT FROM 'object' THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = format('model_list_invalid: the entry at %s is not an object', at),
            HINT = 'Pass what the provider''s model-list endpoint returned, or its data (Anthropic, OpenAI) or models (Gemini) array.';
    END IF;
    IF provider = 'anthropic' THEN
        -- Anthropic's ModelInfo (GET /v1/models).
        name := entry ->> 'id';
        IF jsonb_typeof(entry -> 'max_input_tokens') = 'number' THEN
            said := said || jsonb_build_object('hard_window', (entry ->> 'max_input_tokens')::int);
        END IF;
        IF jsonb_typeof(entry -> 'max_tokens') = 'number' THEN
            said := said || jsonb_build_object('max_output_tokens', (entry ->> 'max_tokens')::int);
        END IF;
        caps := entry -> 'capabilities';
        IF jsonb_typeof(caps -> 'thinking' -> 'types') = 'object' THEN
            modes := ARRAY(SELECT m FROM unnest(ARRAY['adaptive', 'enabled', 'disabled', 'between_tools']) AS m
                            WHERE (caps -> 'thinking' -> 'types' -> m ->> 'supported')::boolean);
            said := said || jsonb_build_object('thinking_modes', to_jsonb(modes),
                'thinking_default', CASE WHEN 'adaptive' = ANY (modes) THEN 'adaptive'
                                         WHEN 'enabled' = ANY (modes) THEN 'enabled' END);
        END IF;
        IF jsonb_typeof(caps -> 'effort') = 'object' THEN
            efforts := ARRAY(SELECT e FROM unnest(ARRAY['low', 'medium', 'high', 'xhigh', 'max']) AS e
                              WHERE (caps -> 'effort' ->> 'supported')::boolean
                                AND (caps -> 'effort' -> e ->> 'supported')::boolean);
            said := said || jsonb_build_object('efforts', to_jsonb(efforts));
        END IF;
        lifecycle := entry ->> 'lifecycle';
        said := said || jsonb_build_object(
            'deprecated_at', (entry ->> 'deprecated_at')::timestamptz::date,
            'retires_at', coalesce((entry ->> 'retires_at')::timestamptz::date,
                                   CASE WHEN lifecycle = 'retired'
                                        THEN coalesce((entry ->> 'deprecated_at')::timestamptz::date,
                                                      (entry ->> 'created_at')::timestamptz::date) END));
        IF said ->> 'deprecated_at' IS NOT NULL OR said ->> 'retires_at' IS NOT NULL THEN
            said := said || jsonb_build_object('lifecycle_source', format('Anthropic GET /v1/models, imported %s', current_date));
        END IF;
    ELSIF provider = 'openai' THEN
        -- OpenAI's Model (GET /v1/models): its id and the day it shuts down.
        name := entry ->> 'id';
        said := jsonb_build_object('retires_at', (entry ->> 'shutdown_date')::date);
        IF entry ->> 'shutdown_date' IS NOT NULL THEN
            said := said || jsonb_build_object('lifecycle_source', format('OpenAI GET /v1/models, imported %s', current_date));
        END IF;
    ELSIF provider = 'gemini' THEN
        -- Gemini's Model (models.list): only what generates content.
        name := regexp_replace(entry ->> 'name', '^models/', '');
        IF jsonb_typeof(entry -> 'supportedGenerationMethods') = 'array'
           AND NOT (entry -> 'supportedGenerationMethods') ? 'generateContent' THEN
            RETURN NULL;
        END IF;
        IF jsonb_typeof(entry -> 'inputTokenLimit') = 'number' THEN
            said := said || jsonb_build_object('hard_window', (entry ->> 'inputTokenLimit')::int);
        END IF;
        IF jsonb_typeof(entry -> 'outputTokenLimit') = 'number' THEN
            said := said || jsonb_build_object('max_output_tokens', (entry ->> 'outputTokenLimit')::int);
        END IF;
        IF jsonb_typeof(entry -> 'maxTemperature') = 'number' THEN
            said := said || jsonb_build_object('temperature_max', (entry ->> 'maxTemperature')::float8);
        END IF;
        IF jsonb_typeof(entry -> 'thinking') = 'boolean' THEN
            said := said || jsonb_build_object('include_thoughts', (entry ->> 'thinking')::boolean);
        END IF;
    ELSIF prompt._dialect_known('chat', provider) THEN
        -- A compatible provider's GET /v1/models (an OpenAI-shaped list): its id, and what
        -- its entries add: the window (Mistral's max_context_length, Groq's context_window,
        -- Together's, OpenRouter's and Fireworks' context_length, vLLM's max_model_len), the
        -- output limit (Groq's max_completion_tokens, OpenRouter's top_provider's) and
        -- Mistral's deprecation day and replacement.
        name := coalesce(entry ->> 'id', entry ->> 'name');
        FOR caps IN SELECT entry -> k FROM unnest(ARRAY['max_context_length', 'context_window', 'context_length',
                                                        'max_model_len']) AS k LOOP
            IF jsonb_typeof(caps) = 'number' THEN
                said := said || jsonb_build_object('hard_window', (caps #>> '{}')::int);
                EXIT;
            END IF;
        END LOOP;
        caps := coalesce(entry -> 'max_completion_tokens', entry -> 'top_provider' -> 'max_completion_tokens');
        IF jsonb_typeof(caps) = 'number' THEN
            said := said || jsonb_build_object('max_output_tokens', (caps #>> '{}')::int);
        END IF;
        IF jsonb_typeof(entry -> 'deprecation') = 'string' THEN
            said := said || jsonb_build_object(
                'retires_at', (entry ->> 'deprecation')::timestamptz::date,
                'replacement', entry ->> 'deprecation_replacement_model',
                'lifecycle_source', format('%s GET /v1/models, imported %s', provider, current_date));
        END IF;
    ELSE
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = format('model_list_invalid: provider %L has no model list pgprompt reads', provider);
    END IF;
    IF name IS NULL OR name = '' THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = format('model_list_invalid: the entry at %s names no model (%s)', at,
                             CASE provider WHEN 'gemini' THEN 'name' ELSE 'id' END);
    END IF;
    RETURN said || jsonb_build_object('name', name);
EXCEPTION WHEN invalid_datetime_format OR datetime_field_overflow OR invalid_text_representation
               OR numeric_value_out_of_range THEN
    RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
        MESSAGE = format('model_list_invalid: the entry at %s holds a value of the wrong kind (%s)', at, SQLERRM);
END
$$;

-- The wires of an OpenAI id, by the catalog's rule for its family: an id whose name, past
-- its family's (the whole name without one), names a kind OpenAI serves on Responses only
-- (pro, codex, deep-research, a domain model: healthcare, law, cyber, rosalind, research,
-- daybreak; computer-use) is served on responses alone; else on its family's wires, or
-- on both. The rule of openai 3.63.0's ResponsesModel and ChatModel, checked against them
-- by tests/python/test_model_catalog.py (the ids it does not fit are rows of their own).
CREATE FUNCTION prompt._openai_wires(name text) RETURNS text[]
LANGUAGE sql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT CASE
        WHEN substr(lower($1), coalesce(length(f.name), 0) + 1)
             ~ '(^|-)(pro|codex|deep-research|healthcare|law|cyber|rosalind|research|daybreak)(-|$)|^computer-use'
            THEN ARRAY['responses']
        ELSE coalesce(f.wires, ARRAY['responses', 'chat']) END
      FROM (SELECT NULL) AS one
      LEFT JOIN prompt.model_profiles f ON f.name = prompt._model_profile($1, NULL)
$$;

-- The rules a new row starts from: its family's (the profile its name resolves to), or
-- the provider's defaults; an OpenAI id's wires by the catalog's rule (_openai_wires); a
-- compatible provider's id is its own, on chat.
CREATE FUNCTION prompt._model_list_base(provider text, name text) RETURNS jsonb
LANGUAGE sql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT coalesce(
        (SELECT to_jsonb(p) - 'imported' - 'deprecated_at' - 'retires_at' - 'replacement' - 'lifecycle_source'
           FROM prompt.model_profiles p WHERE p.name = (prompt._model_profile($2, NULL)::jsonb ->> 'name')),
        jsonb_build_object('thinking_modes', '[]'::jsonb, 'efforts', '[]'::jsonb, 'thinking_display', '[]'::jsonb,
                           'include_thoughts', false, 'thinking_with_forced_tool', true, 'sampling_together', true,
                           'max_breakpoints', 0, 'min_cache_tokens', 1024, 'cache_ttls', '[]'::jsonb,
                           'replays_thinking', false, 'system_messages', false, 'cache_diagnostics', false)
        || CASE $1
            WHEN 'anthropic' THEN '{"provider": "anthropic", "wires": ["anthropic"], "tokenizer": "cl100k_base",
                "cache_breakpoints": "cache_control", "max_breakpoints": 4, "cache_ttls": ["5m", "1h"],
                "cache_lookback": 20, "replays_thinking": true, "thinking_with_forced_tool": false,
                "sampling_together": false}'::jsonb
            WHEN 'openai' THEN '{"provider": "openai", "wires": ["responses", "chat"], "tokenizer": "o200k_base"}'::jsonb
            WHEN 'gemini' THEN '{"provider": "google", "wires": ["gemini"], "tokenizer": "o200k_base", "temperature_max": 2,
                "top_p_max": 1}'::jsonb
            -- A compatible provider's: its own, on chat.
            ELSE jsonb_build_object('provider', $1, 'wires', '["chat"]'::jsonb, 'tokenizer', 'o200k_base',
                                    'temperature_max', 2, 'top_p_max', 1)
        END)
        || CASE WHEN $1 = 'openai' THEN jsonb_build_object('wires', to_jsonb(prompt._openai_wires($2)))
                -- A compatible provider's list is that provider's, on chat, whatever family its ids follow.
                WHEN $1 NOT IN ('anthropic', 'gemini') THEN jsonb_build_object('provider', $1, 'wires', '["chat"]'::jsonb)
                ELSE '{}' END
$$;

CREATE FUNCTION prompt.import_models(provider text, models jsonb, overwrite boolean DEFAULT false)
RETURNS TABLE (name text, action text)
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    entries jsonb;
    path text;
    i int := 0;
    e jsonb;
    said jsonb;
    existing prompt.model_profiles;
    current jsonb;
    row_json jsonb;
    edited boolean;
BEGIN
    -- The lists it reads: Anthropic's and Gemini's own, and every chat provider's (OpenAI's
    -- and the compatible ones', the library's list).
    IF provider IS NULL OR provider NOT IN ('anthropic', 'gemini') AND NOT prompt._dialect_known('chat', provider) THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = format('model_list_invalid: provider %L has no model list pgprompt reads', provider),
            HINT = 'Name the provider whose model-list endpoint returned the list: anthropic, openai, gemini, or a compatible provider of the chat wire (mistral, deepseek, xai, groq, together, fireworks, openrouter, ollama, vllm, azure).';
    END IF;
    IF jsonb_typeof(models) = 'array' THEN
        entries := models;
        path := '';
    ELSE
        entries := coalesce(models -> 'data', models -> 'models');
        path := CASE WHEN models ? 'data' THEN '/data' ELSE '/models' END;
    END IF;
    IF jsonb_typeof(entries) IS DISTINCT FROM 'array' THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = 'model_list_invalid: models holds no list of models (an array, or one under data or models)',
            HINT = 'Pass what GET /v1/models (Anthropic, OpenAI) or models.list (Gemini) returned.';
    END IF;
    FOR e IN SELECT x FROM jsonb_array_elements(entries) AS x LOOP
        said := prompt._model_list_entry(provider, e, path || '/' || i);
        i := i + 1;
        CONTINUE WHEN said IS NULL;
        name := said ->> 'name';
        SELECT * INTO existing FROM prompt.model_profiles p WHERE p.name = said ->> 'name';
        -- A model the list says thinks, whose row (or, new, its family) says not how: it
        -- takes the thinking levels every thinking Gemini takes (low, high); a row's or a
        -- family's own rules stay.
        IF (said ->> 'include_thoughts')::boolean
           AND coalesce(cardinality(existing.thinking_modes),
                        jsonb_array_length(prompt._model_list_base(provider, name) -> 'thinking_modes')) = 0 THEN
            said := said || '{"thinking_modes": ["adaptive"], "thinking_default": "adaptive", "efforts": ["low", "high"]}'::jsonb;
        END IF;
        IF existing.name IS NULL THEN
            row_json := prompt._model_list_base(provider, name) || said
                        || jsonb_build_object('shipped', false, 'imported', said);
            -- The family's budget range follows the list's output limit.
            IF row_json ? 'budget_min' AND jsonb_typeof(row_json -> 'budget_min') = 'number' AND said ? 'max_output_tokens' THEN
                row_json := row_json || jsonb_build_object('budget_max', (said ->> 'max_output_tokens')::int - 1);
            END IF;
            INSERT INTO prompt.model_profiles SELECT (jsonb_populate_record(NULL::prompt.model_profiles, row_json)).*;
            action := 'inserted';
            RETURN NEXT;
            CONTINUE;
        END IF;
        current := to_jsonb(existing);
        -- Another provider's row (a Mistral list naming a Claude id): the list is not its
        -- provider's to say, whatever overwrite says.
        IF existing.provider IS DISTINCT FROM (CASE provider WHEN 'gemini' THEN 'google' ELSE provider END) THEN
            action := 'kept';
            RETURN NEXT;
            CONTINUE;
        END IF;
        -- Changed by a user: never imported and not shipped, or what the last import wrote
        -- no longer stands.
        edited := CASE WHEN existing.imported IS NULL THEN NOT existing.shipped
                       ELSE EXISTS (SELECT 1 FROM jsonb_each(existing.imported) AS w(k, v)
                                     WHERE current -> w.k IS DISTINCT FROM w.v) END;
        IF NOT EXISTS (SELECT 1 FROM jsonb_each(said) AS w(k, v) WHERE current -> w.k IS DISTINCT FROM w.v) THEN
            action := 'unchanged';
        ELSIF edited AND NOT overwrite THEN
            action := 'kept';
        ELSE
            row_json := current || said || jsonb_build_object('shipped', false, 'imported', said);
            UPDATE prompt.model_profiles p SET (provider, wires, advisory_window, hard_window, max_output_tokens, tokenizer,
                    thinking_modes, thinking_default, efforts, thinking_display, budget_min, budget_max, include_thoughts,
                    thinking_with_forced_tool, temperature_max, top_p_max, sampling_together, cache_breakpoints,
                    max_breakpoints, min_cache_tokens, cache_ttls, cache_lookback, replays_thinking, shipped,
                    deprecated_at, retires_at, replacement, system_messages, cache_diagnostics, imported, lifecycle_source) =
                   (SELECT r.provider, r.wires, r.advisory_window, r.hard_window, r.max_output_tokens, r.tokenizer,
                           r.thinking_modes, r.thinking_default, r.efforts, r.thinking_display, r.budget_min, r.budget_max,
                           r.include_thoughts, r.thinking_with_forced_tool, r.temperature_max, r.top_p_max,
                           r.sampling_together, r.cache_breakpoints, r.max_breakpoints, r.min_cache_tokens, r.cache_ttls,
                           r.cache_lookback, r.replays_thinking, r.shipped, r.deprecated_at, r.retires_at, r.replacement,
                           r.system_messages, r.cache_diagnostics, r.imported, r.lifecycle_source
                      FROM jsonb_populate_record(NULL::prompt.model_profiles, row_json) r)
             WHERE p.name = existing.name;
            action := 'updated';
        END IF;
        RETURN NEXT;
    END LOOP;
END
$$;

-- Models and where they stand in their provider's lifecycle (README, "Model profiles"):
-- every model row with its profile's dates; retiring_soon, a retirement within 30 days; a
-- retirement no source gives is deprecated, never retired (a compile warns).
CREATE VIEW prompt.model_status WITH (security_invoker = true) AS
SELECT m.name AS model, p.name AS profile, p.deprecated_at, p.retires_at, p.replacement,
       CASE WHEN p.retires_at <= current_date AND p.lifecycle_source IS NOT NULL THEN 'retired'
            WHEN p.deprecated_at <= current_date OR p.retires_at IS NOT NULL THEN 'deprecated'
            WHEN p.name IS NULL THEN 'unprofiled'
            ELSE 'active' END AS lifecycle,
       p.retires_at IS NOT NULL AND p.retires_at > current_date AND p.retires_at <= current_date + 30 AS retiring_soon,
       p.retires_at - current_date AS days_left,
       p.lifecycle_source
  FROM prompt.models m
  LEFT JOIN LATERAL (SELECT q.* FROM prompt.model_profiles q
                      WHERE q.name = (prompt._model_profile(m.name, m.profile)::jsonb ->> 'name')) p ON true;

-- What weakens README "Security"'s promises, each with its fix (no rows on a correct
-- install): a grant of the four owner's privileges, code pgprompt did not create on its
-- tables, its own triggers or row-level security turned off, an object or owner in its
-- schema it did not make, tenancy listed but off, the history rewrite or the replica role
-- set where a session inherits it. A policy of a user's is listed as information: it
-- confines as PostgreSQL defines (pgprompt's permissive policy yields to it).
CREATE FUNCTION prompt.security_check()
RETURNS TABLE (severity text, object text, problem text, fix text)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    WITH ext AS (SELECT e.oid, e.extowner FROM pg_extension e WHERE e.extname = 'pgprompt'),
    nsp AS (SELECT n.oid, n.nspowner, n.nspacl FROM pg_namespace n WHERE n.nspname = 'prompt'),
    own AS (SELECT c.relowner AS owner FROM pg_class c WHERE c.oid = 'prompt.turns'::regclass),
    members AS (SELECT d.classid, d.objid FROM pg_depend d, ext
                 WHERE d.refclassid = 'pg_extension'::regclass AND d.refobjid = ext.oid AND d.deptype = 'e'),
    tables AS (SELECT c.oid, c.relname, c.relowner, c.relacl, c.relrowsecurity, c.relkind FROM pg_class c, nsp
                WHERE c.relnamespace = nsp.oid AND c.relkind IN ('r', 'p', 'v')),
    who (oid, name) AS (SELECT 0::oid, 'PUBLIC' UNION ALL SELECT r.oid, quote_ident(r.rolname) FROM pg_roles r)
    SELECT 'critical', format('prompt.%I', t.relname),
           format('%s holds %s: the tables'' owner''s alone', w.name, a.privilege_type),
           format('REVOKE %s ON prompt.%I FROM %s CASCADE;', a.privilege_type, t.relname, w.name)
      FROM tables t, LATERAL aclexplode(t.relacl) a, who w
     WHERE a.grantee = w.oid AND a.grantee <> t.relowner
       AND a.privilege_type IN ('TRIGGER', 'TRUNCATE', 'REFERENCES', 'MAINTAIN')
    UNION ALL
    SELECT 'critical', format('prompt.%I(%I)', t.relname, c.attname),
           format('%s holds REFERENCES on a column: a foreign key of its reaches the table, the tables'' owner''s alone', w.name),
           CASE WHEN a.grantor = t.relowner
                THEN format('REVOKE REFERENCES (%I) ON prompt.%I FROM %s CASCADE;', c.attname, t.relname, w.name)
                -- Its grantor lost the option (a REVOKE on the table does not reach a
                -- column's grants): the owner gives it back and takes it with CASCADE.
                ELSE format('ALTER EVENT TRIGGER pgprompt_privileges DISABLE; GRANT REFERENCES (%1$I) ON prompt.%2$I TO %3$s WITH GRANT OPTION; '
                            'REVOKE REFERENCES (%1$I) ON prompt.%2$I FROM %3$s CASCADE; ALTER EVENT TRIGGER pgprompt_privileges ENABLE;',
                            c.attname, t.relname, quote_ident(pg_get_userbyid(a.grantor))) END
      FROM tables t JOIN pg_attribute c ON c.attrelid = t.oid AND c.attacl IS NOT NULL,
           LATERAL aclexplode(c.attacl) a, who w
     WHERE a.grantee = w.oid AND a.grantee <> t.relowner AND a.privilege_type = 'REFERENCES'
    UNION ALL
    SELECT 'critical', format('trigger %I on prompt.%I', g.tgname, t.relname),
           CASE WHEN g.tgisinternal THEN format('a foreign key of %s runs its actions inside pgprompt''s writes', g.tgconstrrelid::regclass)
                ELSE format('a trigger pgprompt did not create (function %s): pgprompt''s writes refuse to run it', g.tgfoid::regprocedure) END,
           CASE WHEN g.tgisinternal THEN format('ALTER TABLE %s DROP CONSTRAINT %I;', g.tgconstrrelid::regclass,
                                                 (SELECT k.conname FROM pg_constraint k WHERE k.oid = g.tgconstraint))
                ELSE format('DROP TRIGGER %I ON prompt.%I;', g.tgname, t.relname) END
      FROM tables t JOIN pg_trigger g ON g.tgrelid = t.oid
     -- pgprompt's: its function is the extension's and it carries the extension's comment
     -- (only the owner comments on a trigger); a foreign key's, when the other table is
     -- pgprompt's too.
     WHERE CASE WHEN g.tgisinternal
                THEN g.tgconstrrelid <> 0 AND NOT EXISTS (SELECT 1 FROM members m WHERE m.classid = 'pg_class'::regclass AND m.objid = g.tgconstrrelid)
                ELSE NOT EXISTS (SELECT 1 FROM members m WHERE m.classid = 'pg_proc'::regclass AND m.objid = g.tgfoid)
                     OR coalesce(obj_description(g.oid, 'pg_trigger'), '') NOT LIKE 'pgprompt: %' END
    UNION ALL
    SELECT 'critical', format('trigger %I on prompt.%I', g.tgname, t.relname),
           'pgprompt''s own trigger is disabled (or fires only for replication): what it refuses goes through',
           format('ALTER TABLE prompt.%I ENABLE TRIGGER %I;', t.relname, g.tgname)
      FROM tables t JOIN pg_trigger g ON g.tgrelid = t.oid
     WHERE NOT g.tgisinternal AND g.tgenabled IN ('D', 'R')
       AND EXISTS (SELECT 1 FROM members m WHERE m.classid = 'pg_proc'::regclass AND m.objid = g.tgfoid)
    UNION ALL
    SELECT 'critical', 'event trigger ' || quote_ident(v.evtname),
           'pgprompt''s event trigger is disabled: a GRANT of TRIGGER, TRUNCATE, REFERENCES or MAINTAIN on its tables goes through',
           format('ALTER EVENT TRIGGER %I ENABLE;', v.evtname)
      FROM pg_event_trigger v WHERE v.evtname IN ('pgprompt_privileges', 'pgprompt_privileges_before') AND v.evtenabled IN ('D', 'R')
    UNION ALL
    SELECT 'critical', format('prompt.%I', t.relname), 'row-level security is off: tenancy and the policies do not apply',
           format('ALTER TABLE prompt.%I ENABLE ROW LEVEL SECURITY;', t.relname)
      FROM tables t WHERE t.relkind IN ('r', 'p') AND NOT t.relrowsecurity
    UNION ALL
    -- Names as regclass and regprocedure print them: qualified and quoted (a fix is SQL).
    SELECT 'critical', format('%s %s', CASE WHEN m.classid = 'pg_proc'::regclass THEN 'function' ELSE 'relation' END, o.name),
           format('owned by %s, not by the tables'' owner %s', o.owner::regrole, (SELECT owner FROM own)::regrole),
           format('ALTER %s %s OWNER TO %s;', CASE WHEN m.classid = 'pg_proc'::regclass THEN 'ROUTINE' ELSE 'TABLE' END,
                  o.name, (SELECT owner FROM own)::regrole)
      FROM members m
      JOIN LATERAL (SELECT c.oid::regclass::text AS name, c.relowner AS owner FROM pg_class c WHERE m.classid = 'pg_class'::regclass AND c.oid = m.objid
                    UNION ALL
                    SELECT p.oid::regprocedure::text, p.proowner FROM pg_proc p WHERE m.classid = 'pg_proc'::regclass AND p.oid = m.objid) o ON true
     WHERE o.owner <> (SELECT owner FROM own)
    UNION ALL
    SELECT 'critical', format('%s %s', CASE WHEN x.kind = 'f' THEN 'function' ELSE 'relation' END, x.name),
           'an object in schema prompt that pgprompt did not create: it could stand in for one of pgprompt''s',
           format('DROP %s %s;', CASE WHEN x.kind = 'f' THEN 'ROUTINE' ELSE 'TABLE' END, x.name)
      FROM (SELECT 'r' AS kind, c.oid::regclass::text AS name, 'pg_class'::regclass AS classid, c.oid FROM pg_class c, nsp
             WHERE c.relnamespace = nsp.oid AND c.relkind IN ('r', 'p', 'v', 'm', 'f', 'S')
            UNION ALL
            SELECT 'f', p.oid::regprocedure::text, 'pg_proc'::regclass, p.oid FROM pg_proc p, nsp WHERE p.pronamespace = nsp.oid) x
     WHERE NOT EXISTS (SELECT 1 FROM members m WHERE m.classid = x.classid AND m.objid = x.oid)
    UNION ALL
    SELECT 'critical', 'schema prompt', format('owned by %s, not by the tables'' owner', nsp.nspowner::regrole),
           format('ALTER SCHEMA prompt OWNER TO %s;', (SELECT owner FROM own)::regrole)
      FROM nsp WHERE nsp.nspowner <> (SELECT owner FROM own)
    UNION ALL
    SELECT 'critical', 'schema prompt', format('%s may create objects in it, which could stand in for pgprompt''s', w.name),
           format('REVOKE CREATE ON SCHEMA prompt FROM %s CASCADE;', w.name)
      FROM nsp, LATERAL aclexplode(nsp.nspacl) a, who w
     WHERE a.grantee = w.oid AND a.grantee <> nsp.nspowner AND a.privilege_type = 'CREATE'
    UNION ALL
    SELECT 'warning', 'prompt.tenancy', 'tenants are listed and tenancy is off: grants decide what every role reads',
           'SELECT prompt.set_tenancy(true);'
     WHERE EXISTS (SELECT 1 FROM prompt.tenants) AND NOT EXISTS (SELECT 1 FROM prompt.tenancy)
    UNION ALL
    SELECT 'warning', format('tenant %I', t.role_name), 'no role of that name existed when the row was written: it confines nobody',
           format('UPDATE prompt.tenants SET role_name = role_name WHERE role_name = %L;  -- once the role exists (or DELETE the row)', t.role_name)
      FROM prompt.tenants t WHERE t.role_oid IS NULL OR NOT EXISTS (SELECT 1 FROM pg_roles r WHERE r.oid = t.role_oid)
    UNION ALL
    SELECT CASE WHEN c.setting LIKE 'session_replication_role=%' THEN 'critical' ELSE 'warning' END,
           CASE WHEN s.setrole = 0 THEN 'database ' || quote_ident(d.datname) ELSE 'role ' || s.setrole::regrole::text END,
           format('%s is set for every session of it: %s', c.setting,
                  CASE WHEN c.setting LIKE 'session_replication_role=%' THEN 'pgprompt''s triggers do not fire'
                       ELSE 'the history rewrite is on wherever that role may turn it on' END),
           format('ALTER %s RESET %s;', CASE WHEN s.setrole = 0 THEN 'DATABASE ' || quote_ident(d.datname) ELSE 'ROLE ' || s.setrole::regrole::text END,
                  split_part(c.setting, '=', 1))
      FROM pg_db_role_setting s LEFT JOIN pg_database d ON d.oid = s.setdatabase, LATERAL unnest(s.setconfig) c(setting)
     WHERE (s.setdatabase = 0 OR d.datname = current_database())
       -- As PostgreSQL reads them: any case, and a boolean's every spelling it takes.
       AND (c.setting ~* '^session_replication_role=(replica|local)$'
            OR c.setting ~* '^pgprompt\.allow_history_rewrite=(on|t|tr|tru|true|y|ye|yes|1)$')
    UNION ALL
    SELECT 'critical', format('parameter %s', a.parname),
           format('%s may set it: pgprompt''s triggers do not fire for its sessions', w.name),
           format('REVOKE SET ON PARAMETER %s FROM %s;', a.parname, w.name)
      FROM pg_parameter_acl a, LATERAL aclexplode(a.paracl) x, who w
     WHERE a.parname = 'session_replication_role' AND x.grantee = w.oid AND x.privilege_type = 'SET'
    UNION ALL
    SELECT 'warning', format('default privileges of %s%s', d.defaclrole::regrole,
                             CASE WHEN d.defaclnamespace = 0 THEN '' ELSE ' in schema prompt' END),
           format('a table that role creates%s gives %s %s: an update''s new tables would hold what the privilege matrix does not give',
                  CASE WHEN d.defaclnamespace = 0 THEN '' ELSE ' in schema prompt' END, w.name, x.privilege_type),
           format('ALTER DEFAULT PRIVILEGES FOR ROLE %s%s REVOKE %s ON TABLES FROM %s;', d.defaclrole::regrole,
                  CASE WHEN d.defaclnamespace = 0 THEN '' ELSE ' IN SCHEMA prompt' END, x.privilege_type, w.name)
      FROM pg_default_acl d, LATERAL aclexplode(d.defaclacl) x, who w
     WHERE d.defaclobjtype = 'r' AND x.grantee = w.oid AND x.grantee <> d.defaclrole
       AND (d.defaclnamespace = (SELECT oid FROM nsp)
            OR (d.defaclnamespace = 0 AND d.defaclrole IN ((SELECT owner FROM own), (SELECT nspowner FROM nsp))))
    UNION ALL
    SELECT 'info', format('policy %I on prompt.%s', p.polname, t.relname),
           'a policy of a user''s: it confines as PostgreSQL defines, and pgprompt''s permissive policy yields to a permissive one',
           'none needed; DROP POLICY to let grants and tenancy decide again'
      FROM tables t JOIN pg_policy p ON p.polrelid = t.oid WHERE p.polname NOT LIKE 'pgprompt\_%'
$$;

-- The operator's view: per conversation, what the backfill, retention and the response
-- loop have to do with (sum its columns for the whole database).
CREATE VIEW prompt.status WITH (security_invoker = true) AS
SELECT c.id AS conversation_id,
       (SELECT count(*) FROM prompt.turns t WHERE t.conversation_id = c.id) AS turns,
       (SELECT count(*) FROM prompt.turns t WHERE t.conversation_id = c.id AND EXISTS (
            SELECT 1 FROM pg_catalog.unnest(prompt._tokenizers_in_use()) AS k(tokenizer),
                 LATERAL (SELECT pg_catalog.array_position(ARRAY['cl100k_base', 'o200k_base']::text[], k.tokenizer) AS slot) s
             WHERE (t.content IS NOT NULL AND t.content_tokens[s.slot] IS NULL)
                OR (t.prompt IS NOT NULL AND t.prompt_tokens[s.slot] IS NULL))) AS turns_missing_counts,
       (SELECT count(*) FROM prompt.seals s WHERE s.conversation_id = c.id) AS seals,
       (SELECT count(*) FROM prompt.seals s WHERE s.conversation_id = c.id AND s.pruned_at IS NOT NULL) AS pruned_seals,
       (SELECT count(*) FROM prompt.seals_02 p WHERE p.conversation_id = c.id) AS unconverted_02_seals,
       (SELECT coalesce(sum(s.bytes), 0) FROM prompt.seals s WHERE s.conversation_id = c.id) AS sealed_bytes,
       (SELECT coalesce(sum(pg_catalog.pg_column_size(n.body)), 0) FROM prompt.seal_nodes n
         WHERE n.conversation_id = c.id) AS seal_storage_bytes,
       (SELECT count(*) FROM prompt.responses r WHERE r.conversation_id = c.id) AS responses,
       (SELECT coalesce(sum(r.billed_input_tokens), 0) FROM prompt.responses r WHERE r.conversation_id = c.id) AS billed_input_tokens,
       (SELECT coalesce(sum(r.cache_read_tokens), 0) FROM prompt.responses r WHERE r.conversation_id = c.id) AS cache_read_tokens,
       (SELECT coalesce(sum(r.output_tokens), 0) FROM prompt.responses r WHERE r.conversation_id = c.id) AS output_tokens,
       -- The database's, on every row (not to be summed): what prompt.security_check() lists
       -- as critical or a warning.
       (SELECT count(*) FROM prompt.security_check() k WHERE k.severity <> 'info') AS security_problems
  FROM prompt.conversations c;

-- Row-level security (README, "Security"): the extension's own policies, so pg_dump and
-- a restore bring them back with the extension (policies on an extension's tables are
-- never dumped), over the tenancy rows in prompt.tenants, prompt.administrators and
-- prompt.workspace_members (dumped as data).
--
-- Every table has one permissive policy, pgprompt_rows, that lets a role's grants decide
-- — while the table has no permissive policy of a user's own: then it yields, and the
-- user's policies confine as PostgreSQL defines (a permissive policy of theirs is never
-- OR-ed with a policy that passes every row). Restrictive policies confine what tenancy
-- confines (src/pg/tenancy.rs): once a tenant is listed, a role reads the rows of the
-- workspaces it is a tenant of and the shared ones (models, profiles, runner and
-- application skills), and writes only rows no other tenant's compile reads; a role that
-- is listed nowhere and administers nothing reads and writes no tenant's rows. The
-- lookups are one per statement (InitPlans). The table's owner and superusers bypass
-- row-level security altogether.
--
-- Unconfined (no tenant listed, or an administrator):  prompt._unconfined()
-- A role's workspaces:                                 prompt._my_workspaces()
-- Its members:             SELECT m.user_id FROM prompt.workspace_members m WHERE m.workspace_id = ANY (its workspaces)
-- Rows of a user it alone may write: prompt._tenant_writes_user(user_id) (the user is in
-- its workspaces and in no other; looked up past row-level security).

-- Whether a table has no permissive policy of a user's own (the extension's yields to one).
CREATE FUNCTION prompt._grants_decide(tbl regclass) RETURNS bool
LANGUAGE sql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT NOT EXISTS (SELECT 1 FROM pg_catalog.pg_policy p
                        WHERE p.polrelid = $1 AND p.polpermissive AND p.polname <> 'pgprompt_rows')
$$;

-- A tenant's or administrator's row names its role; its OID is stamped from the name.
CREATE FUNCTION prompt._role_row_write() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    NEW.role_oid := (SELECT r.oid FROM pg_catalog.pg_roles r WHERE r.rolname = NEW.role_name);
    RETURN NEW;
END
$$;

CREATE TRIGGER tenants_role BEFORE INSERT OR UPDATE ON prompt.tenants
    FOR EACH ROW EXECUTE FUNCTION prompt._role_row_write();
CREATE TRIGGER administrators_role BEFORE INSERT OR UPDATE ON prompt.administrators
    FOR EACH ROW EXECUTE FUNCTION prompt._role_row_write();

ALTER TABLE prompt.tenants ENABLE ROW LEVEL SECURITY;
CREATE POLICY pgprompt_own_rows ON prompt.tenants FOR SELECT USING (role_oid = prompt._role());
GRANT SELECT ON prompt.tenants TO PUBLIC;
ALTER TABLE prompt.administrators ENABLE ROW LEVEL SECURITY;
CREATE POLICY pgprompt_own_rows ON prompt.administrators FOR SELECT USING (role_oid = prompt._role());
GRANT SELECT ON prompt.administrators TO PUBLIC;
-- The tenancy rows are an administrator's to write (a role that listed itself as a tenant
-- would choose what it reads once tenancy is on); an administrator reads them all.
CREATE POLICY pgprompt_administrators ON prompt.tenants
    USING ((SELECT prompt._administers())) WITH CHECK ((SELECT prompt._administers()));
CREATE POLICY pgprompt_administrators ON prompt.administrators
    USING ((SELECT prompt._administers())) WITH CHECK ((SELECT prompt._administers()));

-- Whether tenancy is on: everyone reads it; only an administrator changes it
-- (prompt.set_tenancy writes it as the tables' owner; a restore inserts it), whatever the
-- grants: TRUNCATE included.
ALTER TABLE prompt.tenancy ENABLE ROW LEVEL SECURITY;
CREATE POLICY pgprompt_reads ON prompt.tenancy FOR SELECT USING (true);
GRANT SELECT ON prompt.tenancy TO PUBLIC;
CREATE FUNCTION prompt._tenancy_write() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM prompt._tenancy_guard(TG_OP);
    RETURN NULL;
END
$$;
CREATE TRIGGER tenancy_guard BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON prompt.tenancy
    FOR EACH STATEMENT EXECUTE FUNCTION prompt._tenancy_write();

-- A delete whose foreign-key action would change a row another tenant reads is refused
-- before the action runs (PostgreSQL runs it past row-level security).
CREATE FUNCTION prompt._tenant_delete() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM prompt._tenant_delete_guard(TG_TABLE_NAME, OLD.id);
    RETURN OLD;
END
$$;

CREATE TRIGGER users_tenant_delete BEFORE DELETE ON prompt.users
    FOR EACH ROW EXECUTE FUNCTION prompt._tenant_delete();
CREATE TRIGGER conversations_tenant_delete BEFORE DELETE ON prompt.conversations
    FOR EACH ROW EXECUTE FUNCTION prompt._tenant_delete();

DO $rls$
DECLARE
    free constant text := '(SELECT prompt._unconfined())';
    mine constant text := '((SELECT prompt._my_workspaces())::uuid[])';
    members text;
    conversations text;
    -- table => (what a tenant reads, what it may write)
    rules text[][];
    r text[];
BEGIN
    members := format('(SELECT m.user_id FROM prompt.workspace_members m WHERE m.workspace_id = ANY %s)', mine);
    conversations := format('(SELECT c.id FROM prompt.conversations c WHERE c.workspace_id = ANY %s)', mine);
    rules := ARRAY[
        ARRAY['workspace_members', format('workspace_id = ANY %s', mine), 'false'],
        ARRAY['workspaces', format('id = ANY %s', mine), format('id = ANY %s', mine)],
        ARRAY['users', format('id IN %s', members), 'prompt._tenant_writes_user(id)'],
        ARRAY['models', 'true', 'false'],
        ARRAY['model_profiles', 'true', 'false'],
        ARRAY['documents',
              format('workspace_id = ANY %s OR user_id IN %s', mine, members),
              format('workspace_id = ANY %s OR prompt._tenant_writes_user(user_id)', mine)],
        ARRAY['document_versions', 'document_id IN (SELECT d.id FROM prompt.documents d)',
              'document_id IN (SELECT d.id FROM prompt.documents d)'],
        ARRAY['memories',
              format('CASE scope WHEN ''workspace'' THEN workspace_id = ANY %1$s WHEN ''conversation'' THEN conversation_id IN %2$s '
                     'WHEN ''speaker'' THEN user_id IN %3$s AND speaker_id IN %3$s ELSE user_id IN %3$s END',
                     mine, conversations, members),
              format('CASE scope WHEN ''workspace'' THEN workspace_id = ANY %1$s WHEN ''conversation'' THEN conversation_id IN %2$s '
                     'WHEN ''speaker'' THEN user_id IN %3$s AND speaker_id IN %3$s '
                     'AND (prompt._tenant_writes_user(user_id) OR prompt._tenant_writes_user(speaker_id)) '
                     'ELSE prompt._tenant_writes_user(user_id) END',
                     mine, conversations, members)],
        ARRAY['skills',
              format('CASE source WHEN ''workspace'' THEN workspace_id = ANY %1$s WHEN ''speaker'' THEN user_id IN %2$s AND speaker_id IN %2$s '
                     'WHEN ''runner'' THEN true WHEN ''application'' THEN true ELSE user_id IN %2$s END',
                     mine, members),
              format('CASE source WHEN ''workspace'' THEN workspace_id = ANY %1$s WHEN ''speaker'' THEN user_id IN %2$s AND speaker_id IN %2$s '
                     'AND (prompt._tenant_writes_user(user_id) OR prompt._tenant_writes_user(speaker_id)) '
                     'WHEN ''runner'' THEN false WHEN ''application'' THEN false ELSE prompt._tenant_writes_user(user_id) END',
                     mine, members)],
        ARRAY['conversations', format('workspace_id = ANY %s', mine),
              format('workspace_id = ANY %s AND (parent_id IS NULL OR prompt._tenant_writes_conversation(parent_id))', mine)],
        ARRAY['turns', format('conversation_id IN %s', conversations), format('conversation_id IN %s', conversations)],
        ARRAY['rounds', format('conversation_id IN %s', conversations), format('conversation_id IN %s', conversations)],
        ARRAY['seals', format('conversation_id IN %s', conversations), format('conversation_id IN %s', conversations)],
        ARRAY['seal_nodes', format('conversation_id IN %s', conversations), format('conversation_id IN %s', conversations)],
        ARRAY['seals_02', format('conversation_id IN %s', conversations), format('conversation_id IN %s', conversations)],
        ARRAY['responses', format('conversation_id IN %s', conversations), format('conversation_id IN %s', conversations)],
        ARRAY['counts', format('conversation_id IN %s', conversations), format('conversation_id IN %s', conversations)]
    ];
    FOREACH r SLICE 1 IN ARRAY rules LOOP
        EXECUTE format('ALTER TABLE prompt.%I ENABLE ROW LEVEL SECURITY', r[1]);
        EXECUTE format('CREATE POLICY pgprompt_rows ON prompt.%1$I USING ((SELECT prompt._grants_decide(%2$L)))'
                       ' WITH CHECK ((SELECT prompt._grants_decide(%2$L)))', r[1], 'prompt.' || r[1]);
        EXECUTE format('CREATE POLICY pgprompt_tenant_reads ON prompt.%I AS RESTRICTIVE FOR SELECT USING (%s OR %s)', r[1], free, r[2]);
        EXECUTE format('CREATE POLICY pgprompt_tenant_inserts ON prompt.%I AS RESTRICTIVE FOR INSERT WITH CHECK (%s OR %s)', r[1], free, r[3]);
        EXECUTE format('CREATE POLICY pgprompt_tenant_updates ON prompt.%1$I AS RESTRICTIVE FOR UPDATE USING (%2$s OR %3$s) WITH CHECK (%2$s OR %3$s)',
                       r[1], free, r[3]);
        EXECUTE format('CREATE POLICY pgprompt_tenant_deletes ON prompt.%I AS RESTRICTIVE FOR DELETE USING (%s OR %s)', r[1], free, r[3]);
    END LOOP;
END
$rls$;
GRANT SELECT ON prompt.workspace_members TO PUBLIC;

-- Privileges (README, "Security": the privilege matrix, which a test holds to the
-- catalogs). Nobody but the tables' owner holds TRIGGER, TRUNCATE, REFERENCES or MAINTAIN
-- on a prompt table: a trigger of another's would run inside pgprompt's writes (with a
-- superuser's rights, when a superuser compiles), a foreign key of another's would run
-- its actions there, and TRUNCATE passes row-level security by.
--
-- The extension's owner, when it is not the objects' owner (a database owner that
-- installed the extension as trusted: the objects are the bootstrap superuser's), uses
-- what it installed and grants it on: USAGE on the schema and SELECT, INSERT, UPDATE and
-- DELETE on every table and view, with grant option. Named, never ALL.
DO $owner$
BEGIN
    IF pg_catalog.quote_ident(current_user) <> '@extowner@' THEN
        GRANT USAGE ON SCHEMA prompt TO @extowner@ WITH GRANT OPTION;
        GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA prompt TO @extowner@ WITH GRANT OPTION;
    END IF;
END
$owner$;

-- The four privileges taken back from everyone but the owner, as they stand after the
-- script: default privileges (ALTER DEFAULT PRIVILEGES of the role that runs it) can give
-- them to a new table, and an update takes back what an earlier release or an operator
-- gave (with CASCADE, what was granted on from them).
DO $privileges$
DECLARE
    g record;
    guarded boolean;
    done boolean;
BEGIN
    FOR g IN
        SELECT c.oid::pg_catalog.regclass AS tbl, a.privilege_type,
               CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(a.grantee)) END AS who
          FROM pg_catalog.pg_class c, LATERAL pg_catalog.aclexplode(c.relacl) a
         WHERE c.relnamespace = 'prompt'::pg_catalog.regnamespace AND a.grantee <> c.relowner AND a.grantor = c.relowner
           AND a.privilege_type IN ('TRIGGER', 'TRUNCATE', 'REFERENCES', 'MAINTAIN')
    LOOP
        EXECUTE format('REVOKE %s ON %s FROM %s CASCADE', g.privilege_type, g.tbl, g.who);
    END LOOP;
    -- REFERENCES on a column lets a foreign key reach the table too. The REVOKE above does
    -- not reach a column grant made by a role it took the grant option from (PostgreSQL
    -- cascades within one ACL): such a grant stays, held, with its grantor unable to take it
    -- back. The owner gives that grantor the option on the column and takes it back with
    -- CASCADE, which takes what it granted there (the GRANT guard, when an update finds it,
    -- is off meanwhile: the script gives nothing that stays).
    SELECT e.evtenabled <> 'D' INTO guarded FROM pg_catalog.pg_event_trigger e WHERE e.evtname = 'pgprompt_privileges';
    IF guarded THEN
        ALTER EVENT TRIGGER pgprompt_privileges DISABLE;
    END IF;
    FOR pass IN 1..8 LOOP
        done := true;
        FOR g IN
            SELECT c.oid::pg_catalog.regclass AS tbl, t.attname, a.grantor = c.relowner AS owners,
                   CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(a.grantee)) END AS who,
                   pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(a.grantor)) AS grantor
              FROM pg_catalog.pg_class c JOIN pg_catalog.pg_attribute t ON t.attrelid = c.oid AND t.attacl IS NOT NULL,
                   LATERAL pg_catalog.aclexplode(t.attacl) a
             WHERE c.relnamespace = 'prompt'::pg_catalog.regnamespace AND a.grantee <> c.relowner
               AND a.privilege_type = 'REFERENCES'
        LOOP
            done := false;
            IF g.owners THEN
                EXECUTE format('REVOKE REFERENCES (%I) ON %s FROM %s CASCADE', g.attname, g.tbl, g.who);
            ELSE
                EXECUTE format('GRANT REFERENCES (%I) ON %s TO %s WITH GRANT OPTION', g.attname, g.tbl, g.grantor);
                EXECUTE format('REVOKE REFERENCES (%I) ON %s FROM %s CASCADE', g.attname, g.tbl, g.grantor);
            END IF;
        END LOOP;
        EXIT WHEN done;
    END LOOP;
    IF guarded THEN
        ALTER EVENT TRIGGER pgprompt_privileges ENABLE;
    END IF;
END
$privileges$;

-- And never given again: a GRANT that gives one of them on a prompt table to a role other
-- than the owner is refused (privilege_refused, 42501), the statement undone
-- (src/pg/privileges.rs: what stood before the statement is remembered at its start). Event
-- triggers of the extension's (a superuser's objects, even in a trusted install): only a
-- superuser can disable them, and prompt.security_check() says so when one did.
-- A role without USAGE on schema prompt can name no prompt table, so its GRANT gives
-- nothing on one (GRANT ... ON ALL TABLES IN SCHEMA prompt needs that USAGE too): the
-- guard skips it rather than fail every GRANT such a role makes in this database (it
-- could not call the guard's functions).
CREATE FUNCTION prompt._grants_snapshot() RETURNS event_trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF has_schema_privilege('prompt', 'USAGE') THEN
        PERFORM set_config('pgprompt_grants.pending', 'on', true);
        PERFORM prompt._grants_before();
    END IF;
END
$$;
CREATE FUNCTION prompt._grants_guard() RETURNS event_trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    -- Run whenever the start took a snapshot, whatever the USAGE now (revoked meanwhile:
    -- the call fails, and the GRANT with it).
    IF has_schema_privilege('prompt', 'USAGE') OR current_setting('pgprompt_grants.pending', true) = 'on' THEN
        PERFORM prompt._grants_after();
        PERFORM set_config('pgprompt_grants.pending', 'off', true);
    END IF;
END
$$;
CREATE EVENT TRIGGER pgprompt_privileges_before ON ddl_command_start WHEN TAG IN ('GRANT')
    EXECUTE FUNCTION prompt._grants_snapshot();
CREATE EVENT TRIGGER pgprompt_privileges ON ddl_command_end WHEN TAG IN ('GRANT')
    EXECUTE FUNCTION prompt._grants_guard();

-- Comments -----------------------------------------------------------------------

COMMENT ON TABLE prompt.model_profiles IS
    'The rules of known models: the wires that serve them, windows and output limit, the thinking modes, efforts, displays and budgets they take, sampling options and their ranges, cache rules (breakpoint spelling and count, minimum cached prefix, TTLs, lookback). Shipped rows come with the extension and its updates; add your own and name them in models.profile.';
COMMENT ON COLUMN prompt.models.profile IS
    'The profile the model follows; NULL: the profile named like the model, or by the longest prefix of its name (dated ids). A model without one keeps its wire''s rules.';
COMMENT ON FUNCTION prompt._model_profile_of(text, text) IS
    'Internal: the profile a model follows, as a row of its JSON (none: no profile); inlined where a query calls it from FROM.';
COMMENT ON FUNCTION prompt._model_profile(text, text) IS
    'Internal: the profile a model follows, as JSON (the one it names, else the longest prefix of its name).';
COMMENT ON TABLE prompt.models IS
    'A model a request is compiled for: its wire (anthropic, chat, responses, gemini, converse), tokenizer, windows, image support, token margin, max_output_tokens, cache TTL and request options. name is the provider''s model id.';
COMMENT ON TABLE prompt.users IS
    'People and agents. An agent has a steward (its controlling Human), a prompt_mechanism (default, assembly, raw), an optional prompt_template, a model, an application and request options.';
COMMENT ON TABLE prompt.workspaces IS
    'The room a conversation lives in; its timezone dates {{date}}.';
COMMENT ON COLUMN prompt.workspaces.paths IS
    'The workspace''s paths: when set, the runtime block renders a line "Workspace paths: a, b".';
COMMENT ON TABLE prompt.documents IS
    'Prompt documents: slot rows (system_prompt on an agent, character on a workspace, persona on a human) and durable documents (SOUL, MISSION, ...) on an agent. One per owner and name; a write bumps version and updated_at. Macros are checked on write.';
COMMENT ON TABLE prompt.memories IS
    'Memory entries by scope (agent, workspace, speaker, user, conversation) and path; rows under skills/ never render as memory.';
COMMENT ON TABLE prompt.skills IS
    'Skill documents for the catalog, by source (runner, application, agent, workspace, speaker, user); recall_only skills are never listed.';
COMMENT ON TABLE prompt.conversations IS
    'One timeline: its workspace, kind, stored answerer, creator and origin channel; a Side names its parent and the turn captured there.';
COMMENT ON FUNCTION prompt._conversations_capture() IS
    'Internal trigger: a Side answers as its captured turn''s answerer (filled in when NULL, refused when another) and keeps the captured turn as it stood (captured_round, captured_content, captured_summary, captured_summary_round, captured_cleared).';
COMMENT ON COLUMN prompt.conversations.captured_turn_id IS
    'A Side''s captured turn, in parent_id: its history is the parent''s turns through that turn, in its answerer''s reading, then its own.';
COMMENT ON COLUMN prompt.conversations.captured_round IS
    'A Side''s captured turn as it stood at the capture: its newest round then (NULL: none). Rounds written after are not the Side''s. Filled in by the capture trigger.';
COMMENT ON COLUMN prompt.conversations.captured_content IS
    'A Side''s captured turn as it stood at the capture: its content (the answer) then. Filled in by the capture trigger.';
COMMENT ON COLUMN prompt.conversations.captured_summary IS
    'A Side''s captured turn as it stood at the capture: its in-turn summary then. Filled in by the capture trigger.';
COMMENT ON COLUMN prompt.conversations.captured_summary_round IS
    'A Side''s captured turn as it stood at the capture: the round its in-turn summary starts from. Filled in by the capture trigger.';
COMMENT ON COLUMN prompt.conversations.captured_cleared IS
    'A Side''s captured turn as it stood at the capture: what its requests had cleared of its rounds then (its rounds'' cleared records, oldest first; NULL: none). A record written after the capture is not the Side''s. Filled in by the capture trigger.';
COMMENT ON TABLE prompt.turns IS
    'The timeline, ordered by seq: message, reply and summary turns. A reply turn is what compile_turn compiles; once sealed, its sealed_* columns and every column its request was compiled from never change (content stays writable).';
COMMENT ON TABLE prompt.rounds IS
    'The model rounds of a run-backed reply turn: the assistant''s text and tool calls, the results with their captures, the steers read mid-round, and whether it was aborted. A round a request carried (sent_at) never changes.';
COMMENT ON TABLE prompt.seals IS
    'One row per sealed turn: what its first compile froze (frozen), where its body is stored (head, lead, chain, chain_length, tail in prompt.seal_nodes), and the body''s SHA-256 and size, kept when prune_seals drops the body.';
COMMENT ON TABLE prompt.seal_nodes IS
    'The pieces of sealed bodies, each stored once per conversation: list elements chained newest to oldest (parent), and the text around the lists. Written by compile_turn; prune_seals removes what no body uses.';

COMMENT ON COLUMN prompt.turns.content_tokens IS
    'Token counts of content as history renders it bare, {cl100k_base, o200k_base}; kept by the write trigger.';
COMMENT ON COLUMN prompt.turns.prompt_tokens IS
    'Token counts of prompt, {cl100k_base, o200k_base}; kept by the write trigger.';
COMMENT ON COLUMN prompt.turns.own_entries IS
    'The history entries of this turn read by its own answerer; kept by the write triggers so a budget counts what it leaves out without reading it.';
COMMENT ON COLUMN prompt.turns.sealed_preface IS
    'What the turn laid between history and its input when it was sealed; later turns of the same answerer replay it byte for byte.';
COMMENT ON COLUMN prompt.rounds.sent_at IS
    'When a compile_turn first sent this round; from then on the round never changes.';

COMMENT ON FUNCTION prompt.compile_turn(uuid, uuid) IS
    'The request body for the reply turn''s next model call, as json ready to POST. The first call seals it; later calls return exactly the sealed bytes, plus the rounds written since.';
COMMENT ON FUNCTION prompt.preview_turn(uuid, uuid) IS
    'The body compile_turn would return, without writing anything; works read-only and on hot standbys.';
COMMENT ON FUNCTION prompt.sealed_body(uuid, uuid) IS
    'The body a turn''s seal stored, exactly as its first compile_turn returned it (without the rounds written since); NULL for a turn that is not sealed.';
COMMENT ON FUNCTION prompt.explain_turn(uuid, uuid) IS
    'How the body is made: mechanism, model, wire, whether sealed, the compiled messages, cache breakpoints, the preface, the full estimate (with estimate.cleared: each tool result sent cleared, its round, call_id, tool and tokens), a stateful turn''s chain (stateful) and what the provider''s cache should do with it sent now (cache: as prompt.cache_report predicts). Never raises for a budget problem.';
COMMENT ON FUNCTION prompt.estimate_turn(uuid, uuid) IS
    'The token budget of a turn, one row per block in block order, then the tools, then one cleared_tool_result row per tool result the request sends cleared (selected: its round; skipped_reason: its call and tool; tokens: what it would have cost); reports budget problems instead of raising them.';
COMMENT ON FUNCTION prompt.prune_seals(uuid, timestamptz) IS
    'Drops the bodies of the conversation''s seals older than the given time, keeping each seal''s digest, size and estimate; returns how many it pruned. A pruned turn''s compile_turn raises sealed_request_pruned.';
COMMENT ON FUNCTION prompt.pretty(json) IS
    'A body (or any JSON) indented for reading, its keys in the order they were written (jsonb_pretty would sort them).';
COMMENT ON FUNCTION prompt.validate_template(jsonb) IS
    'Every problem of an assembly template as (JSON-pointer path, code, message); no rows means valid.';
COMMENT ON FUNCTION prompt.count_tokens(text, text) IS
    'The number of tokens of a text as ordinary text, for cl100k_base (default) or o200k_base, exactly as tiktoken counts.';
COMMENT ON FUNCTION prompt.escape_envelope(text) IS
    'Escapes a body for the inside of a speaker envelope, so it can neither open nor close one.';
COMMENT ON FUNCTION prompt.unescape_envelope(text) IS
    'The exact inverse of escape_envelope.';
COMMENT ON PROCEDURE prompt.backfill_token_counts(text, integer) IS
    'Stores the token counts of every turn for a tokenizer they lack (after adding a model with a new tokenizer), in committed batches with a NOTICE each; restartable. CALL it outside a transaction block.';
COMMENT ON FUNCTION prompt._models_tokenizer() IS
    'Internal trigger: a NOTICE naming backfill_token_counts when a model brings a tokenizer stored turns have no counts for.';
COMMENT ON FUNCTION prompt.record_response(uuid, uuid, jsonb) IS
    'Records a provider''s response body (Anthropic Message, OpenAI ChatCompletion or Response, Gemini GenerateContentResponse, Bedrock ConverseResponse) where the next compile reads it: a direct reply''s text as the turn''s content, a run''s step as its next round; stores the usage beside the estimate of the request it answered (as its compile stored it). Idempotent per response id (a response without one, per body).';
COMMENT ON FUNCTION prompt.record_tool_results(uuid, uuid, jsonb) IS
    'Writes the results of the newest round''s tool calls ([{call_id, content, is_error?, captures?}]); returns the round''s number.';
COMMENT ON TABLE prompt.responses IS
    'One row per recorded provider response: step 0 a direct reply''s answer, step n the run''s round n; the usage as billed (input, cache writes, cache reads, output) beside the estimate of the request it answered.';
COMMENT ON VIEW prompt.model_calibration IS
    'Per model: the recorded responses, and the median and p95 of billed over estimated input tokens. models.token_margin_auto compiles with the p95 as the margin.';
COMMENT ON VIEW prompt.status IS
    'Per conversation: turns, turns lacking a stored token count for a tokenizer in use (backfill_token_counts), seals, pruned seals, 0.2 seals not converted yet (convert_seals_02), sealed body bytes and their stored size, recorded responses and their billed tokens (sum these for the whole database); and, on every row, the database''s security problems (the critical and warning rows of prompt.security_check()).';
COMMENT ON TABLE prompt.seals_02 IS
    '0.2 seals not converted yet, as 0.2 stored them (the update from 0.2 moves them here). CALL prompt.convert_seals_02() converts them; compile_turn converts its conversation''s first. Empty on a fresh install.';
COMMENT ON PROCEDURE prompt.convert_seals_02(int) IS
    'Converts the 0.2 seals left in prompt.seals_02 into 0.3 seals, in committed batches with a NOTICE each; resumable. CALL it outside a transaction block.';
COMMENT ON FUNCTION prompt._convert_seals_02(uuid, bigint) IS
    'Internal: converts up to batch_size 0.2 seals (of one conversation, or any when NULL), oldest first; returns how many. One batch of convert_seals_02.';
COMMENT ON FUNCTION prompt.verify_seals(uuid) IS
    'For an auditor: every seal (of one conversation, or of every one the caller can see) whose bytes do not read back as sealed, with the problem (missing, a lost node, pointers that do not fit, bytes that do not match the digest). Pruned bodies are not checked.';
COMMENT ON FUNCTION prompt.memo_stats() IS
    'This backend''s token-count memo as the calling role sees it (each role finds only its own counts): its entries, the capacity (pgprompt.memo_capacity), its lookups answered from the memo and its lookups that counted.';
COMMENT ON FUNCTION prompt.search_deferred(uuid, uuid, text) IS
    'The tool-search backend of a turn''s deferred callables and tools: the catalog lines and tool definitions it deferred (as its seal froze them) that match every term of the query, case-insensitively.';
COMMENT ON FUNCTION prompt.skills_for_turn(uuid, uuid) IS
    'The complete effective skill set of a turn''s callables (a skill_view backend): what its catalog lists, then the recall-only skills, each with its callable, source, name and description, as the skills stand now.';
COMMENT ON FUNCTION prompt.cache_report(uuid) IS
    'A row per request the conversation sent (each sealed first request, step 0, and each continuation, step = the newest round it carried), in order: its input tokens, the prefix it shares with the request before it, where it first differs and why (tools, system, trim, messages or model), and what the provider''s cache should read, write and leave uncached under the model''s rules (breakpoints, lookback, minimum prefix, TTL from the times sent), beside the cache read and write billed.';
COMMENT ON FUNCTION prompt.transcript(uuid, uuid) IS
    'The summarizer''s transcript: every turn from the newest summary turn through the given one, as spoken (each speaker''s words in its envelope, kernel rows bare), blank-line separated. Write the summary as a summary turn.';
COMMENT ON FUNCTION prompt._tokenizers_in_use() IS
    'Internal: the tokenizers of the models in use, whose counts the turns trigger stores.';
COMMENT ON FUNCTION prompt._history_rewrite_allowed() IS
    'Internal: whether the transaction set pgprompt.allow_history_rewrite = on, as a role that may (a superuser, or one granted SET on it); 42501 for one that may not.';
COMMENT ON FUNCTION prompt._storage_guard(text, text) IS
    'Internal: refuses a write of what was sent (seal storage, a turn''s seal columns, a round''s sent mark, a Side''s capture) unless pgprompt''s own writer runs it, an administrator inserts it (a restore) or a permitted rewrite truncates.';
COMMENT ON FUNCTION prompt._parent_gone(uuid, uuid) IS
    'Internal: whether a conversation (or a turn of it) no longer exists, looked up as the tables'' owner: its rows go with it.';
COMMENT ON FUNCTION prompt._truncate_guard(text) IS
    'Internal: refuses TRUNCATE of turns or rounds that hold a sealed turn or a sent round, unless a permitted history rewrite is on.';
COMMENT ON FUNCTION prompt._lock_conversation(uuid) IS
    'Internal: the conversation''s row lock, one writer of its next seq at a time (taken only when the caller can see the conversation).';
COMMENT ON FUNCTION prompt._history_truncate() IS
    'Internal trigger: TRUNCATE of turns or rounds holding what was sent needs a permitted history rewrite.';
COMMENT ON FUNCTION prompt._seal_storage_statement() IS
    'Internal trigger: INSERT into seal storage is pgprompt''s (or an administrator''s restore); TRUNCATE needs a permitted history rewrite.';
COMMENT ON FUNCTION prompt._grants_decide(regclass) IS
    'Internal (row-level security): whether a table has no permissive policy of a user''s own; the extension''s permissive policy yields to one.';
COMMENT ON FUNCTION prompt._role_row_write() IS
    'Internal trigger: stamps role_oid from role_name on a tenant''s or administrator''s row (NULL for a role that does not exist: it matches nobody).';
COMMENT ON FUNCTION prompt._tenant_delete() IS
    'Internal trigger: refuses a confined role''s delete whose foreign-key action would change a row another tenant reads.';
COMMENT ON FUNCTION prompt._tenant_delete_guard(text, uuid) IS
    'Internal: the check of _tenant_delete (a shared agent stewarded by the user, a conversation of another workspace captured from the conversation).';
COMMENT ON FUNCTION prompt._unconfined() IS
    'Internal (tenancy policies): whether the current role is not confined: tenancy is off, or it administers the extension (its owner, prompt.administrators, superuser, BYPASSRLS).';
COMMENT ON FUNCTION prompt._my_workspaces() IS
    'Internal (tenancy policies): the workspaces the current role is a tenant of, by its OID; empty for a role listed nowhere.';
COMMENT ON FUNCTION prompt._role() IS
    'Internal: the current role''s OID.';
COMMENT ON FUNCTION prompt._wire_known(text) IS
    'Internal (the CHECK of models.wire and responses.shape): whether the text names one of the library''s wires.';
COMMENT ON FUNCTION prompt._wires_known(text[]) IS
    'Internal (the CHECK of model_profiles.wires): whether every entry names one of the library''s wires (a NULL entry does not).';
COMMENT ON FUNCTION prompt._provider_known(text) IS
    'Internal (the CHECK of model_profiles.provider): whether the text names one of the library''s providers.';
COMMENT ON TABLE prompt.administrators IS
    'Tenancy''s administrators: roles that, once tenants are listed, read and write every tenant''s rows (their grants decide), beside the extension''s owner and roles with BYPASSRLS. Managed by the extension''s owner; kept by pg_dump.';
COMMENT ON COLUMN prompt.tenants.role_oid IS
    'The role''s OID, stamped from role_name whenever the row is written (a restore included): tenancy follows the role, not its name. NULL: no role of that name exists, and the row confines nobody.';
COMMENT ON COLUMN prompt.administrators.role_oid IS
    'The role''s OID, stamped from role_name whenever the row is written.';
COMMENT ON COLUMN prompt.rounds.sent_digest IS
    'The SHA-256 of what the first request that carried the round sent (its assistant, results, steers and abort): its turn''s continuation (with sent_at), or a later turn''s seal that sent it in history (alone). From then on the round never changes; every later read and verify_seals check it.';
COMMENT ON FUNCTION prompt._rounds_stored() IS
    'Internal trigger (AFTER, on prompt.rounds): what only pgprompt writes of a round (sent_at, sent_digest, sent_estimate, cleared, sent_layout) and a sent round''s content, checked again after every BEFORE trigger.';
COMMENT ON COLUMN prompt.rounds.cleared IS
    'What the request that first carried the round cleared under request_options.clear_tool_results ({"placeholder", "results": [{"round", "call_id"}]}), written with sent_at by pgprompt: every later request of the turn, and every later turn that reads it, sends those results as the placeholder. NULL: it cleared nothing.';
COMMENT ON COLUMN prompt.rounds.sent_estimate IS
    'The estimate of the first request that carried the round, written with sent_at: what record_response keeps beside the usage of the response to it.';
COMMENT ON COLUMN prompt.rounds.sent_layout IS
    'On the newest round a continuation carried, that request''s cache layout, written with sent_at by pgprompt (core laid.rs): how many of its seal''s elements it kept, the blocks of those it appended past what the turn''s previous continuation appended alike, and its request-level marker. cache_report and explain_turn read a run''s requests from it with the seal''s layout, never compiling them again. A stateful turn''s is of the chained form it sent. NULL on the other rounds, on a request sent before 0.6, and on a stateful continuation whose chained form does not extend its seal''s (compiled again when reported, as is one whose chain of layouts does not read). Not covered by a digest: verify_seals checks the rounds it stands for against theirs.';
COMMENT ON COLUMN prompt.seals.frozen_digest IS
    'The SHA-256 of frozen''s jsonb text, written with the seal; every read of the seal checks it.';
COMMENT ON COLUMN prompt.seals.pieces_digest IS
    'The SHA-256 of the body''s pieces as stored (its head''s, tail''s and elements'' node digests in order, then its patch list), written with the seal: with each node checked against its own digest it covers the body. cache_report and explain_turn check every request they replay against it (reading its layout, not its text); verify_seals checks each node too. NULL on a seal written before 0.5 (its body is hashed whole).';
COMMENT ON COLUMN prompt.seals.layout IS
    'The seal''s own cache blocks, written with it (core laid.rs), of the request its turn sent first: those around its list and those of the elements its patches mark (a stateful turn''s: its chained form''s frame, and how many sealed elements it leaves out before its cut). cache_report and explain_turn read it with its nodes'' layouts instead of the body''s text; verify_seals checks that it reads as the text does. NULL on a seal written before 0.6 (read from its text).';
COMMENT ON COLUMN prompt.seal_nodes.layout IS
    'An element node''s cache blocks (each block''s hash without its marks, its tokens under the seal''s tokenizer, zone, mark and TTL), cut when the node was written; NULL for the text around a list and for a node written before 0.6.';
COMMENT ON TABLE prompt.tenants IS
    'Tenancy: once an administrator turned tenancy on (prompt.set_tenancy), every role is confined to the workspaces it is listed for here (it reads their rows and the shared ones, and writes only rows no other tenant''s compile reads); a role listed nowhere reads and writes no tenant''s rows unless it administers the extension. Written by administrators only; kept by pg_dump, and the policies come back with the extension.';
COMMENT ON TABLE prompt.document_versions IS
    'Prompt history: every version of every prompt document, as each write left it (role, body, when, by whom). Written by pgprompt alone (append-only); goes with its document; kept by pg_dump. A seal names the versions it compiled from (turns.sealed_versions, explain_turn''s documents).';
COMMENT ON FUNCTION prompt._document_version_recorded(uuid, integer, text, text, timestamp with time zone, oid) IS
    'Internal (the document versions'' guard): whether an inserted version is recorded already; a restore''s row of it brings back its author.';
COMMENT ON FUNCTION prompt.restore_document(uuid, integer) IS
    'Writes an earlier version of a document again as its newest (role and body; checked like any write); returns the new version. Runs as the caller.';
COMMENT ON FUNCTION prompt._documents_versioned() IS
    'Internal trigger: keeps each write of a document in prompt.document_versions.';
COMMENT ON FUNCTION prompt._document_versions_write() IS
    'Internal trigger: a document''s versions are written by pgprompt alone; deleted with the document or under a permitted history rewrite.';
COMMENT ON FUNCTION prompt._document_version(uuid) IS
    'Internal (the documents trigger): records the document''s version as it now stands, as pgprompt''s own write (nothing when that version is recorded).';
COMMENT ON FUNCTION prompt._document_first_version(uuid, integer) IS
    'Internal (the documents trigger): the version a new document starts at: one past the newest its id''s history records (looked up as the tables'' owner), or an administrator''s own (a restore).';
COMMENT ON FUNCTION prompt._restores() IS
    'Internal: whether the current role''s insert of a document keeps its own version and day (an administrator''s: a restore).';
COMMENT ON TABLE prompt.tenancy IS
    'Whether tenancy is on: one row (who turned it on, and when) while it is. Written by prompt.set_tenancy, an administrator''s; kept by pg_dump. Declared, never inferred from the other tenancy tables: emptying prompt.tenants confines every unlisted role to nothing.';
COMMENT ON FUNCTION prompt.set_tenancy(boolean) IS
    'Turns tenancy on (true) or off (false), as an administrator (the extension''s owner, a role in prompt.administrators, a superuser or BYPASSRLS role); returns whether it is on. On, every other role reads and writes only the rows of the workspaces prompt.tenants lists it for.';
COMMENT ON FUNCTION prompt.security_check() IS
    'Every grant, trigger, disabled trigger, row-level security switch, owner, object, tenancy state or setting that weakens what pgprompt promises (README, "Security"), as (severity, object, problem, fix): critical, warning or info. No rows on a correct install; prompt.status counts the critical and warning ones.';
COMMENT ON FUNCTION prompt._administers() IS
    'Internal (the tenancy tables'' write policies, prompt.tenancy''s guard): whether the current role administers the extension.';
COMMENT ON FUNCTION prompt._tenancy_guard(text) IS
    'Internal: refuses a write of prompt.tenancy by a role that does not administer the extension (administrator_required).';
COMMENT ON FUNCTION prompt._tenancy_write() IS
    'Internal trigger: any write of prompt.tenancy, TRUNCATE included, is an administrator''s.';
COMMENT ON FUNCTION prompt._keys_fixed() IS
    'Internal trigger: refuses an UPDATE of a row''s key (key_immutable); its arguments are the key''s columns.';
COMMENT ON FUNCTION prompt._grants_guard() IS
    'Internal event trigger (the end of a GRANT): refuses one that gave TRIGGER, TRUNCATE, REFERENCES or MAINTAIN on a prompt table to a role other than the tables'' owner (privilege_refused).';
COMMENT ON FUNCTION prompt._grants_snapshot() IS
    'Internal event trigger (the start of a GRANT): remembers who holds the tables'' owner''s four privileges before it.';
COMMENT ON FUNCTION prompt._grants_before() IS
    'Internal (the event trigger at the start of a GRANT): remembers who holds TRIGGER, TRUNCATE, REFERENCES or MAINTAIN on a prompt table besides its owner.';
COMMENT ON FUNCTION prompt._grants_after() IS
    'Internal (the event trigger at the end of a GRANT): refuses the statement when it gave one of those four privileges (privilege_refused).';
COMMENT ON COLUMN prompt.turns.sent_at IS
    'When a seal first sent this turn (a later turn of its conversation was sealed): from then on what was sent of it never changes without a permitted history rewrite.';
COMMENT ON COLUMN prompt.turns.sent_digest IS
    'The SHA-256 of what was sent of the turn (the columns history renders it from), written by the seal that sent it; verify_seals checks it. NULL again when its answer or summary came after that seal, until the next seal.';
COMMENT ON TABLE prompt.workspace_members IS
    'The people and agents of each workspace: what its tenants read of prompt.users and their documents, memory and skills. A user in two workspaces is read by both tenants and written by neither.';
COMMENT ON FUNCTION prompt._tenant_writes_conversation(uuid) IS
    'Internal (tenancy policies): whether the current tenant may write conversation rows of this conversation''s workspace (a Side names a parent of its own workspaces), looked up past row-level security.';
COMMENT ON FUNCTION prompt._tenant_writes_user(uuid) IS
    'Internal (tenancy policies): whether the current tenant may write the rows of this user (a member of its workspaces only), looked up past row-level security.';
COMMENT ON FUNCTION prompt._seal_storage_write() IS
    'Internal trigger: seal storage (seals, seal_nodes, seals_02) changes only through pgprompt''s own writer, or goes with the conversation or turn it belongs to.';
COMMENT ON FUNCTION prompt._documents_write() IS
    'Internal trigger: refuses unknown macros and bodies over 64 KiB; bumps version and updated_at.';
COMMENT ON FUNCTION prompt._users_write() IS
    'Internal trigger: refuses an invalid prompt_template with its JSON-pointer path.';
COMMENT ON FUNCTION prompt._workspaces_write() IS
    'Internal trigger: refuses an unknown timezone.';
COMMENT ON FUNCTION prompt._touch_updated_at() IS
    'Internal trigger: sets updated_at on update.';
COMMENT ON FUNCTION prompt._turns_write() IS
    'Internal trigger: numbers a turn written without seq; refuses changes to a sealed turn or to what a later seal sent of a turn, a reply without poster_id, a message without role, and invalid inline entries, variables, history intent, input, tools, callables or request options; stores token counts and entry counts.';
COMMENT ON FUNCTION prompt._turns_delete() IS
    'Internal trigger: refuses deleting a sealed turn, or one a later seal sent, unless a permitted pgprompt.allow_history_rewrite is on or the whole conversation goes.';
COMMENT ON FUNCTION prompt._rounds_write() IS
    'Internal trigger: refuses a round whose JSON is not a valid round, naming the path, and any change to a round a request carried (its continuation, or a later seal in history); only pgprompt marks a round sent.';
COMMENT ON FUNCTION prompt._rounds_placed() IS
    'Internal trigger: refuses a round on anything but a run reply turn, or numbered after a gap.';
COMMENT ON FUNCTION prompt._rounds_count() IS
    'Internal trigger: keeps turns.own_entries when rounds are added or removed.';
COMMENT ON FUNCTION prompt._options_write() IS
    'Internal trigger: refuses invalid request options of an agent.';
COMMENT ON FUNCTION prompt._model_options_write() IS
    'Internal trigger: refuses request options of a model that are invalid, that its wire cannot carry or that its profile refuses, and a model its profile does not serve on its wire or with its max_output_tokens.';
COMMENT ON FUNCTION prompt._own_entries(text, integer, text, integer[]) IS
    'Internal: the history entries of a reply turn read by its own answerer, as the compiler plans them.';
COMMENT ON FUNCTION prompt._check_document(text, text) IS
    'Internal: the write-time checks of a document body.';
COMMENT ON FUNCTION prompt._check_template(text, text, jsonb) IS
    'Internal: the write-time checks of a prompt_template.';
COMMENT ON FUNCTION prompt._check_turn(text, text, text, text, text, text, text) IS
    'Internal: the write-time checks of a turn''s JSON columns.';
COMMENT ON FUNCTION prompt._check_turn_shape(uuid, text, text, uuid, text, boolean) IS
    'Internal: the write-time checks of a turn''s shape (a reply''s poster, a message''s role, a run''s rounds).';
COMMENT ON FUNCTION prompt._check_request_options(text, text) IS
    'Internal: the write-time checks of request options.';
COMMENT ON FUNCTION prompt._check_options_wire(text, text, text, integer, text, text) IS
    'Internal: the write-time checks of one level''s request options (a model''s, an agent''s or a turn''s) against the wire, max_output_tokens and profile of the model it names (0.5''s; the provider''s dialect is the profile''s or the wire''s maker''s).';
COMMENT ON FUNCTION prompt._check_options_wire(text, text, text, integer, text, text, text, boolean) IS
    'Internal: the write-time checks of one level''s request options (a model''s, an agent''s or a turn''s) against the wire, max_output_tokens, profile, provider and native_images of the model it names.';
COMMENT ON FUNCTION prompt._dialect_known(text, text) IS
    'Internal: whether the wire has a dialect of the provider (the library''s list): the CHECK of models.provider.';
COMMENT ON COLUMN prompt.models.provider IS
    'Whose dialect of the wire the request speaks: on chat openai, azure, mistral, deepseek, xai, groq, together, fireworks, openrouter, ollama or vllm; on anthropic anthropic or vertex; on gemini gemini or vertex. NULL: the profile''s provider where the wire speaks it, else the wire''s maker.';
COMMENT ON FUNCTION prompt._check_round(uuid, integer, text, text, text) IS
    'Internal: the write-time checks of a round.';
COMMENT ON FUNCTION prompt._check_round_place(uuid, integer, text, text, boolean) IS
    'Internal: the write-time checks of where a round sits.';
COMMENT ON FUNCTION prompt._row_tokens(text, text, text[]) IS
    'Internal: the stored token counts of a turn text, one slot per tokenizer.';
COMMENT ON FUNCTION prompt._refuse_sealed(uuid, uuid, text, boolean) IS
    'Internal: raises sealed_turn_immutable for a change to a sealed turn.';
COMMENT ON FUNCTION prompt._refuse_sent_round(uuid, uuid, integer, text) IS
    'Internal: raises sealed_turn_immutable for a change to a sent round.';
COMMENT ON FUNCTION prompt._refuse_timezone(text) IS
    'Internal: raises timezone_invalid.';
COMMENT ON FUNCTION prompt.import_models(text, jsonb, boolean) IS
    'Inserts or updates model profiles from what a provider''s model list returned (anthropic: GET /v1/models; openai: GET /v1/models; gemini: models.list; a compatible provider of the chat wire, mistral, deepseek, xai, groq, together, fireworks, openrouter, ollama, vllm or azure: its GET /v1/models, imported as that provider''s, on chat), or its data/models array: windows, output limit, thinking modes and efforts, lifecycle. Returns (name, action): inserted, updated, unchanged, or kept (a row a user changed: overwrite => true replaces it; a row of another provider, always).';
COMMENT ON FUNCTION prompt._model_list_entry(text, jsonb, text) IS
    'Internal: the profile columns one entry of a provider''s model list gives (NULL for a model that generates no content).';
COMMENT ON FUNCTION prompt._model_list_base(text, text) IS
    'Internal: the rules a model imported for the first time starts from: its family''s profile, or the provider''s defaults; an OpenAI id''s wires by _openai_wires.';
COMMENT ON FUNCTION prompt._openai_wires(text) IS
    'Internal: the wires the catalog''s rule gives an OpenAI id: responses alone for a Responses-only kind past its family''s name (pro, codex, deep-research, healthcare, law, cyber, rosalind, research, daybreak, computer-use), else its family''s, else responses and chat.';
COMMENT ON VIEW prompt.model_status IS
    'Every model row and where its profile puts it in its provider''s lifecycle (active, deprecated, retired, unprofiled), its retirement day, replacement, days left, retiring_soon (within 30 days) and the lifecycle''s source (a retirement without one is deprecated, not retired).';
COMMENT ON COLUMN prompt.model_profiles.retires_at IS
    'The day the provider stops serving the model: from then on a fresh compile for it is refused (model_retired), naming the replacement, when lifecycle_source names where the day comes from; without a source, a NOTICE.';
COMMENT ON COLUMN prompt.model_profiles.deprecated_at IS
    'The day the provider deprecated the model: from then on (or once retires_at is announced) a compile for it raises a NOTICE.';
COMMENT ON COLUMN prompt.model_profiles.lifecycle_source IS
    'Where deprecated_at, retires_at and replacement come from: the SDK file and constant, or the provider''s list or page and the day it was read. A retires_at with no source warns (a NOTICE) and never refuses.';
COMMENT ON COLUMN prompt.model_profiles.replacement IS
    'The model that replaces this one (the provider''s recommendation where it gives one).';
COMMENT ON COLUMN prompt.model_profiles.system_messages IS
    'Whether the model takes {"role": "system"} messages after the leading run: a system entry in history is then sent so, in place.';
COMMENT ON COLUMN prompt.model_profiles.cache_diagnostics IS
    'Whether the model takes request_options.cache_diagnostics (the provider explains a cache miss against the previous response).';
COMMENT ON COLUMN prompt.model_profiles.imported IS
    'What prompt.import_models last wrote of the row (NULL: never imported); an import keeps a row whose columns no longer match it.';
COMMENT ON FUNCTION prompt.count_body(uuid, uuid) IS
    'The body a provider''s token-count endpoint takes for the request compile_turn returns (anthropic: /v1/messages/count_tokens; responses: /v1/responses/input_tokens; gemini: models/{model}:countTokens, as generateContentRequest; converse: /model/{modelId}/count-tokens, as input.converse). The chat wire has none (0A000).';
COMMENT ON FUNCTION prompt.record_count(uuid, uuid, integer) IS
    'Records the input tokens a provider''s count endpoint answered for the turn''s request as it stands, beside its estimate (prompt.counts); model_calibration and token_margin_auto read counts beside billed usage.';
COMMENT ON TABLE prompt.counts IS
    'One row per request counted by a provider''s token-count endpoint (record_count): its input tokens beside the estimate of the request.';
COMMENT ON COLUMN prompt.models.history_cache_ttl IS
    'The TTL of the cache breakpoints after the stable prefix (history, a run''s rounds); NULL: cache_ttl. Never longer than cache_ttl; each provider takes it as its profile allows (Anthropic 5m or 1h; OpenAI 30m or 12h).';

-- Every trigger pgprompt made on its tables carries a comment of the extension's, its
-- function's: only the tables' owner can comment on a trigger, so the comment tells
-- pgprompt's own from a trigger another role made with one of pgprompt's functions (and a
-- WHEN of its own). The writer's check and security_check() read it (README, "Security").
DO $own_triggers$
DECLARE
    t record;
BEGIN
    FOR t IN
        SELECT g.tgname, c.relname, g.tgfoid
          FROM pg_catalog.pg_trigger g JOIN pg_catalog.pg_class c ON c.oid = g.tgrelid
         WHERE c.relnamespace = 'prompt'::pg_catalog.regnamespace AND NOT g.tgisinternal
           AND pg_catalog.obj_description(g.oid, 'pg_trigger') IS NULL
    LOOP
        EXECUTE pg_catalog.format('COMMENT ON TRIGGER %I ON prompt.%I IS %L', t.tgname, t.relname,
            'pgprompt: ' || coalesce(pg_catalog.obj_description(t.tgfoid, 'pg_proc'), 'its own trigger.'));
    END LOOP;
END
$own_triggers$;

-- A schema made before the install (empty, its installer's: schema.sql takes it) was the
-- installer's until this transaction commits: another of its sessions could create in it
-- meanwhile. Whatever stands in it now that the script did not make refuses the install.
DO $planted$
DECLARE
    found text;
BEGIN
    SELECT pg_catalog.string_agg(c.object, ', ') INTO found FROM prompt.security_check() c
     WHERE c.problem LIKE 'an object in schema prompt that pgprompt did not create%';
    IF found IS NOT NULL THEN
        RAISE EXCEPTION 'pgprompt''s schema "prompt" holds what CREATE EXTENSION did not make: %', found
            USING ERRCODE = 'duplicate_schema',
                  DETAIL = 'Another session of the schema''s owner created in it while the extension was installed: it could stand in for pgprompt''s objects.',
                  HINT = 'Drop the schema (DROP SCHEMA prompt CASCADE), then run CREATE EXTENSION pgprompt again, letting it create the schema.';
    END IF;
END
$planted$;
