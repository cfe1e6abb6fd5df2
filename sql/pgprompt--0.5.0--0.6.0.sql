-- pgprompt 0.5.0 -> 0.6.0 (frozen: never edit once released)
--
-- * no code pgprompt did not create runs inside its writes: a trigger of another's on a
--   prompt table is dropped here first, before the update writes anything (0.5 gave a
--   trusted install's database owner TRIGGER: its trigger would have run as the bootstrap
--   superuser), with a WARNING naming it; pgprompt's writes refuse one from now on;
-- * least privilege: TRIGGER, TRUNCATE, REFERENCES and MAINTAIN taken back from everyone
--   but the tables' owner (with what was granted on from them), the installing role of a
--   trusted install given SELECT, INSERT, UPDATE and DELETE by name, and an event trigger
--   that refuses a GRANT of the four; prompt.security_check() and prompt.status's
--   security_problems;
-- * identities never change: every key refuses UPDATE (AFTER triggers, key_immutable);
-- * what a seal sent is frozen: turns.sent_at and sent_digest, written here for the turns
--   the seals so far sent (a turn before a sealed turn of its conversation), and the
--   digest of their complete rounds; verify_seals checks them; a conversation's answerer
--   is frozen once it sealed a turn; the digest of a round is spelled where it is
--   written, prompt._round_digest is gone;
-- * pgprompt's own triggers carry its comment (only the tables' owner comments on a
--   trigger): what tells them from a trigger another role made with one of its functions;
-- * the two procedures that commit declare their variables with qualified types (read
--   with the caller's search_path, before their first statement pins it);
-- * tenancy: a tenant's Side names a parent it may write; a delete a foreign-key action
--   runs for a tenant is checked as the tenant's;
-- * compatible providers: prompt.models.provider names the dialect a wire speaks (chat's
--   compatible providers, Vertex AI on anthropic and gemini); the options checks read it;
-- * lifecycle with its source (model_profiles.lifecycle_source): a retires_at no source
--   gives warns, never refuses; the shipped catalog replaced by 0.6's (the ids of anthropic
--   2.17, openai 3.63 and google-genai 3.6.1; a replacement on its model's wire);
-- * a retired model is refused however its id is spelled (case, spaces, invisible
--   characters, Vertex's @date, :latest): the profile lookup reads those as the id;
-- * prompt history: prompt.document_versions (each document's current version seeded
--   here), written by pgprompt on every write of a document; prompt.restore_document();
--   a seal's sealed_versions names each slot's document and version (slots);
-- * tenancy is declared: prompt.tenancy and prompt.set_tenancy(); turned on here where a
--   tenant is listed; the tenancy rows an administrator's to write.
-- * what is sent keeps its cache layout (seals.layout, seal_nodes.layout,
--   rounds.sent_layout): cache_report and explain_turn read them, not the bodies' text,
--   and compile no request again that stored one; NULL for what 0.5 sent.

-- Code that is not pgprompt's, off its tables before anything is written -----------------

DO $foreign$
DECLARE
    -- 0.5.0's triggers (sql/releases/pgprompt--0.5.0.sql): table.trigger, none with a WHEN.
    own constant text[] := ARRAY[
        'administrators.administrators_role', 'conversations.conversations_capture', 'conversations.conversations_tenant_delete',
        'documents.documents_write', 'memories.memories_touch', 'models.models_options', 'models.models_tokenizer',
        'rounds.rounds_count', 'rounds.rounds_placed', 'rounds.rounds_truncate', 'rounds.rounds_write',
        'seal_nodes.seal_nodes_guard', 'seal_nodes.seal_nodes_statement', 'seals.seals_guard', 'seals.seals_statement',
        'seals_02.seals_02_guard', 'seals_02.seals_02_statement', 'skills.skills_touch', 'tenants.tenants_role',
        'turns.turns_delete', 'turns.turns_truncate', 'turns.turns_write', 'users.users_options',
        'users.users_tenant_delete', 'users.users_write', 'workspaces.workspaces_write'];
    g record;
BEGIN
    FOR g IN
        SELECT t.tgname, c.relname, t.tgfoid::pg_catalog.regprocedure AS fn
          FROM pg_catalog.pg_trigger t JOIN pg_catalog.pg_class c ON c.oid = t.tgrelid
         WHERE c.relnamespace = 'prompt'::pg_catalog.regnamespace AND NOT t.tgisinternal
           AND NOT (c.relname || '.' || t.tgname = ANY (own) AND t.tgqual IS NULL
                    AND EXISTS (SELECT 1 FROM pg_catalog.pg_depend d JOIN pg_catalog.pg_extension e ON e.oid = d.refobjid
                                 WHERE d.classid = 'pg_catalog.pg_proc'::pg_catalog.regclass AND d.objid = t.tgfoid
                                   AND d.refclassid = 'pg_catalog.pg_extension'::pg_catalog.regclass
                                   AND e.extname = 'pgprompt' AND d.deptype = 'e'))
    LOOP
        RAISE WARNING 'pgprompt 0.6.0: dropped trigger % on prompt.% (function %), which pgprompt did not create',
            pg_catalog.quote_ident(g.tgname), g.relname, g.fn
            USING DETAIL = 'A trigger of another role''s on pgprompt''s tables would run inside its writes, with the rights of whoever writes (a superuser compiling, this update).';
        EXECUTE pg_catalog.format('DROP TRIGGER %I ON prompt.%I', g.tgname, g.relname);
    END LOOP;
    -- A foreign key of another table onto pgprompt's runs its actions inside pgprompt's
    -- writes (0.5 gave a trusted install's database owner REFERENCES with ALL).
    FOR g IN
        SELECT k.conname, k.conrelid::pg_catalog.regclass AS tbl, k.confrelid::pg_catalog.regclass AS target
          FROM pg_catalog.pg_constraint k
          JOIN pg_catalog.pg_class r ON r.oid = k.conrelid
          JOIN pg_catalog.pg_class f ON f.oid = k.confrelid
         WHERE k.contype = 'f' AND k.conparentid = 0
           AND f.relnamespace = 'prompt'::pg_catalog.regnamespace AND r.relnamespace <> 'prompt'::pg_catalog.regnamespace
    LOOP
        RAISE WARNING 'pgprompt 0.6.0: dropped foreign key % of % onto %, which pgprompt did not create',
            pg_catalog.quote_ident(g.conname), g.tbl, g.target
            USING DETAIL = 'A foreign key of another table onto pgprompt''s runs its actions inside pgprompt''s writes.';
        EXECUTE pg_catalog.format('ALTER TABLE %s DROP CONSTRAINT %I', g.tbl, g.conname);
    END LOOP;
END
$foreign$;

-- Schema ------------------------------------------------------------------------------

ALTER TABLE prompt.turns ADD COLUMN sent_at timestamptz, ADD COLUMN sent_digest bytea;
ALTER TABLE prompt.model_profiles ADD COLUMN lifecycle_source text;
ALTER TABLE prompt.models ADD COLUMN provider text;
-- What the request that first carried a round cleared (request_options.clear_tool_results).
ALTER TABLE prompt.rounds ADD COLUMN cleared jsonb;
-- The cache layouts stored when a request is sent (core laid.rs); NULL for what 0.5 sent.
ALTER TABLE prompt.rounds ADD COLUMN sent_layout bytea;
ALTER TABLE prompt.seal_nodes ADD COLUMN layout bytea;
ALTER TABLE prompt.seals ADD COLUMN layout bytea;
-- What a Side's captured turn had cleared at the capture (0.5's Sides: nothing).
ALTER TABLE prompt.conversations ADD COLUMN captured_cleared jsonb;
CREATE TABLE prompt.document_versions (
    -- No foreign key: a document's history outlives the document (what a seal names stays
    -- readable, and a document written again under its id continues it).
    document_id uuid NOT NULL,
    version     int NOT NULL,
    role        text NOT NULL,
    body        text NOT NULL,
    written_at  timestamptz NOT NULL DEFAULT now(),
    written_by  regrole,
    PRIMARY KEY (document_id, version)
);
SELECT pg_catalog.pg_extension_config_dump('prompt.document_versions', '');
-- Each document's current version is the first its history holds (who wrote it is not
-- known: written_by NULL).
INSERT INTO prompt.document_versions (document_id, version, role, body, written_at)
SELECT d.id, d.version, d.role, d.body, d.updated_at FROM prompt.documents d;
CREATE TABLE prompt.tenancy (
    enabled_at timestamptz NOT NULL DEFAULT now(),
    enabled_by name NOT NULL
);
CREATE UNIQUE INDEX tenancy_one_row ON prompt.tenancy ((true));
SELECT pg_catalog.pg_extension_config_dump('prompt.tenancy', '');

-- What a seal sent --------------------------------------------------------------------

-- The turns the seals so far sent (each before a sealed turn of its conversation), marked
-- sent with the digest of what was sent, and their complete rounds with the digest (sent_at
-- stays a continuation's); the write triggers step aside for it: 0.5's know no such mark.
ALTER TABLE prompt.turns DISABLE TRIGGER turns_write;
UPDATE prompt.turns t
   SET sent_at = now(),
       sent_digest = sha256(convert_to(jsonb_build_array(t.kind, t.role, t.author_id, t.answerer_id, t.poster_id, t.content,
           t.prompt, t.origin, t.sender_conversation_id, t.mode, t.inline, t.variables, t.input, t.tools, t.callables, t.model,
           t.history, t.memory_user_id, t.summary, t.summary_round, t.request_options, t.seq, t.sealed_preface,
           t.created_at AT TIME ZONE 'UTC')::text, 'UTF8'))
 WHERE t.seq < (SELECT max(s.seq) FROM prompt.turns s WHERE s.conversation_id = t.conversation_id AND s.sealed_at IS NOT NULL);
ALTER TABLE prompt.turns ENABLE TRIGGER turns_write;
ALTER TABLE prompt.rounds DISABLE TRIGGER rounds_write;
UPDATE prompt.rounds r
   SET sent_digest = sha256(convert_to(jsonb_build_array(r.assistant, r.results, r.steers, r.aborted)::text, 'UTF8'))
 WHERE r.sent_digest IS NULL AND (r.results <> '[]' OR NOT r.assistant @> '[{"type": "tool_call"}]')
   AND EXISTS (SELECT 1 FROM prompt.turns t WHERE t.conversation_id = r.conversation_id AND t.id = r.turn_id AND t.sent_at IS NOT NULL);
ALTER TABLE prompt.rounds ENABLE TRIGGER rounds_write;

CREATE OR REPLACE FUNCTION prompt._turns_write() RETURNS trigger
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
CREATE OR REPLACE FUNCTION prompt._turns_delete() RETURNS trigger
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
CREATE OR REPLACE FUNCTION prompt._rounds_write() RETURNS trigger
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
CREATE OR REPLACE FUNCTION prompt._conversations_capture() RETURNS trigger
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
DROP TRIGGER conversations_capture ON prompt.conversations;
CREATE TRIGGER conversations_capture BEFORE INSERT OR UPDATE OF parent_id, captured_turn_id, answerer_id,
    captured_round, captured_content, captured_summary, captured_summary_round, captured_cleared
    ON prompt.conversations FOR EACH ROW EXECUTE FUNCTION prompt._conversations_capture();
CREATE OR REPLACE PROCEDURE prompt.backfill_token_counts(tokenizer text, batch_size int DEFAULT 1000)
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
CREATE OR REPLACE PROCEDURE prompt.convert_seals_02(batch_size int DEFAULT 100)
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
DROP FUNCTION prompt._replayed_by_later_seal(uuid, bigint);
DROP FUNCTION prompt._round_digest(jsonb, jsonb, jsonb, boolean);

-- Prompt history ----------------------------------------------------------------------

CREATE FUNCTION prompt."_document_first_version"(
	"document_id" uuid, /* Option < pgrx :: Uuid > */
	"version" INT /* Option < i32 > */
) RETURNS INT /* Option < i32 > */
VOLATILE PARALLEL SAFE
SET search_path TO pg_catalog, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_document_first_version_wrapper';
CREATE FUNCTION prompt."_restores"() RETURNS bool /* bool */
STRICT VOLATILE PARALLEL SAFE
SET search_path TO pg_catalog, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_restores_wrapper';
CREATE OR REPLACE FUNCTION prompt._documents_write() RETURNS trigger
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
CREATE FUNCTION prompt."_document_version"(
	"document_id" uuid /* Option < pgrx :: Uuid > */
) RETURNS void
VOLATILE PARALLEL UNSAFE
SET search_path TO pg_catalog, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_document_version_wrapper';
CREATE FUNCTION prompt."_document_version_recorded"(
	"document_id" uuid, /* Option < pgrx :: Uuid > */
	"version" INT, /* Option < i32 > */
	"role" TEXT, /* Option < & str > */
	"body" TEXT, /* Option < & str > */
	"written_at" timestamp with time zone, /* Option < pgrx :: datum :: TimestampWithTimeZone > */
	"written_by" oid /* Option < pg_sys :: Oid > */
) RETURNS bool /* bool */
VOLATILE PARALLEL UNSAFE
SET search_path TO pg_catalog, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_document_version_recorded_wrapper';
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
CREATE TRIGGER document_versions_truncate BEFORE TRUNCATE ON prompt.document_versions
    FOR EACH STATEMENT EXECUTE FUNCTION prompt._seal_storage_statement();
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

-- Identities never change -------------------------------------------------------------

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

-- Tenancy, declared -------------------------------------------------------------------

CREATE FUNCTION prompt."_administers"() RETURNS bool /* bool */
STRICT STABLE PARALLEL RESTRICTED
SET search_path TO pg_catalog, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_administers_wrapper';
CREATE FUNCTION prompt."_tenancy_guard"(
	"op" TEXT /* Option < & str > */
) RETURNS void
VOLATILE PARALLEL SAFE
SET search_path TO pg_catalog, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_tenancy_guard_wrapper';
CREATE FUNCTION prompt."set_tenancy"(
	"enabled" bool /* bool */
) RETURNS bool /* bool */
STRICT VOLATILE PARALLEL UNSAFE
SET search_path TO pg_catalog, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'set_tenancy_wrapper';
CREATE FUNCTION prompt."_tenant_writes_conversation"(
	"conversation_id" uuid /* Option < pgrx :: Uuid > */
) RETURNS bool /* bool */
STABLE PARALLEL RESTRICTED
SET search_path TO pg_catalog, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_tenant_writes_conversation_wrapper';
-- On where 0.5 had it on: a tenant is listed.
INSERT INTO prompt.tenancy (enabled_by) SELECT 'pgprompt 0.6.0 update' WHERE EXISTS (SELECT 1 FROM prompt.tenants);
-- Every policy of the tables' own made again (a Side's parent is now one the tenant
-- may write).
DO $drop$
DECLARE
    p record;
BEGIN
    FOR p IN SELECT c.relname, pol.polname FROM pg_catalog.pg_policy pol JOIN pg_catalog.pg_class c ON c.oid = pol.polrelid
              WHERE c.relnamespace = 'prompt'::regnamespace AND c.relname NOT IN ('tenants', 'administrators')
                AND pol.polname IN ('pgprompt_rows', 'pgprompt_tenant_reads', 'pgprompt_tenant_inserts',
                                    'pgprompt_tenant_updates', 'pgprompt_tenant_deletes') LOOP
        EXECUTE format('DROP POLICY %I ON prompt.%I', p.polname, p.relname);
    END LOOP;
END
$drop$;
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
CREATE POLICY pgprompt_administrators ON prompt.tenants
    USING ((SELECT prompt._administers())) WITH CHECK ((SELECT prompt._administers()));
CREATE POLICY pgprompt_administrators ON prompt.administrators
    USING ((SELECT prompt._administers())) WITH CHECK ((SELECT prompt._administers()));
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

-- A model's profile, however its id is spelled; the catalog of the newest SDKs -----------

CREATE OR REPLACE FUNCTION prompt._model_profile_of(model_name text, profile_name text) RETURNS TABLE (profile text)
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
CREATE OR REPLACE FUNCTION prompt._model_list_entry(provider text, entry jsonb, at text) RETURNS jsonb
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

-- Compatible providers and cloud hosts: the dialect a model row speaks ---------------------

CREATE FUNCTION prompt."_dialect_known"(
	"wire" TEXT, /* & str */
	"provider" TEXT /* & str */
) RETURNS bool /* bool */
IMMUTABLE STRICT PARALLEL SAFE
SET search_path TO pg_catalog, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_dialect_known_wrapper';
CREATE FUNCTION prompt."_check_options_wire"(
	"level" TEXT, /* Option < & str > */
	"options" TEXT, /* Option < & str > */
	"wire" TEXT, /* Option < & str > */
	"max_output_tokens" INT, /* Option < i32 > */
	"model" TEXT, /* Option < & str > */
	"profile" TEXT, /* Option < & str > */
	"provider" TEXT, /* Option < & str > */
	"native_images" bool /* Option < bool > */
) RETURNS void
IMMUTABLE PARALLEL SAFE 
SET search_path TO pg_catalog, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_check_options_wire_v6_wrapper';
ALTER TABLE prompt.models ADD CONSTRAINT models_provider_valid CHECK (provider IS NULL OR prompt._dialect_known(wire, provider));
CREATE OR REPLACE FUNCTION prompt._model_options_write() RETURNS trigger
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
DROP TRIGGER models_options ON prompt.models;
CREATE TRIGGER models_options BEFORE INSERT OR UPDATE OF request_options, wire, max_output_tokens, name, profile,
    provider, native_images ON prompt.models
    FOR EACH ROW EXECUTE FUNCTION prompt._model_options_write();
CREATE OR REPLACE FUNCTION prompt._options_write() RETURNS trigger
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
CREATE OR REPLACE FUNCTION prompt._model_list_base(provider text, name text) RETURNS jsonb
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
CREATE OR REPLACE FUNCTION prompt.import_models(provider text, models jsonb, overwrite boolean DEFAULT false)
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
CREATE OR REPLACE VIEW prompt.model_status WITH (security_invoker = true) AS
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

-- The shipped catalog of 0.6 replaces 0.5's (lifecycle with its sources, the ids the newest
-- SDKs list); a model that named a shipped profile keeps naming it (the rows go out and come
-- back in one transaction).
CREATE TEMP TABLE pgprompt_named_profiles ON COMMIT DROP AS
    SELECT m.name, m.profile FROM prompt.models m WHERE m.profile IS NOT NULL;
ALTER TABLE prompt.models DISABLE TRIGGER models_options;
DELETE FROM prompt.model_profiles WHERE shipped;
-- The model profiles pgprompt ships (README, "Model profiles"): the current models of the
-- three providers and the rules each enforces, as their SDKs (anthropic 2.17, openai
-- 3.63, google-genai 3.6.1) and published references give them; scripts/catalog.py checks
-- that every id those SDKs list resolves here, on the wires they list it for. The update scripts run
-- this file as it is (a user's row of a shipped name is left alone). Shipped rows say
-- shipped = true: an update replaces them, pg_dump leaves them to the extension's script
-- and keeps the rows users add. To change a shipped profile, add a row of your own and
-- name it in models.profile.
--
-- Windows and output limits are the providers' published figures; Claude's tokenizer is
-- not public (cl100k_base is the closest count; models.token_margin_auto learns the rest).

INSERT INTO prompt.model_profiles (name, provider, wires, advisory_window, hard_window, max_output_tokens, tokenizer,
    thinking_modes, thinking_default, efforts, thinking_display, budget_min, budget_max, include_thoughts,
    thinking_with_forced_tool, temperature_max, top_p_max, sampling_together,
    cache_breakpoints, max_breakpoints, min_cache_tokens, cache_ttls, cache_lookback, replays_thinking, shipped)
VALUES
-- Anthropic, the 5 family, Opus 4.8 and 4.7, Mythos Preview: adaptive thinking only (a
-- budget is refused with a 400), effort up to max, no sampling options, no thinking beside
-- a forced tool.
    ('claude-opus-5-5',   'anthropic', '{anthropic}', NULL, 1000000, 128000, 'cl100k_base',
     '{adaptive,disabled}', 'adaptive', '{low,medium,high,xhigh,max}', '{summarized,omitted}', NULL, NULL, false,
     false, NULL, NULL, false, 'cache_control', 4, 4096, '{5m,1h}', 20, true, true),
    ('claude-sonnet-5-5', 'anthropic', '{anthropic}', NULL, 1000000, 128000, 'cl100k_base',
     '{adaptive,disabled}', 'adaptive', '{low,medium,high,xhigh,max}', '{summarized,omitted}', NULL, NULL, false,
     false, NULL, NULL, false, 'cache_control', 4, 2048, '{5m,1h}', 20, true, true),
    ('claude-haiku-5-5',  'anthropic', '{anthropic}', NULL, 400000, 64000, 'cl100k_base',
     '{adaptive,disabled}', 'adaptive', '{low,medium,high,max}', '{summarized,omitted}', NULL, NULL, false,
     false, NULL, NULL, false, 'cache_control', 4, 4096, '{5m,1h}', 20, true, true),
    ('claude-fable-5-2',  'anthropic', '{anthropic}', NULL, 1000000, 128000, 'cl100k_base',
     '{adaptive,disabled}', 'adaptive', '{low,medium,high,xhigh,max}', '{summarized,omitted}', NULL, NULL, false,
     false, NULL, NULL, false, 'cache_control', 4, 2048, '{5m,1h}', 20, true, true),
    ('claude-mythos-5-2', 'anthropic', '{anthropic}', NULL, 1000000, 128000, 'cl100k_base',
     '{adaptive,disabled}', 'adaptive', '{low,medium,high,xhigh,max}', '{summarized,omitted}', NULL, NULL, false,
     false, NULL, NULL, false, 'cache_control', 4, 4096, '{5m,1h}', 20, true, true),
    ('claude-fable-5-1',  'anthropic', '{anthropic}', NULL, 1000000, 128000, 'cl100k_base',
     '{adaptive,disabled}', 'adaptive', '{low,medium,high,xhigh,max}', '{summarized,omitted}', NULL, NULL, false,
     false, NULL, NULL, false, 'cache_control', 4, 2048, '{5m,1h}', 20, true, true),
    ('claude-mythos-5-1', 'anthropic', '{anthropic}', NULL, 1000000, 128000, 'cl100k_base',
     '{adaptive,disabled}', 'adaptive', '{low,medium,high,xhigh,max}', '{summarized,omitted}', NULL, NULL, false,
     false, NULL, NULL, false, 'cache_control', 4, 4096, '{5m,1h}', 20, true, true),
    ('claude-opus-5',     'anthropic', '{anthropic}', NULL, 1000000, 128000, 'cl100k_base',
     '{adaptive,disabled}', 'adaptive', '{low,medium,high,xhigh,max}', '{summarized,omitted}', NULL, NULL, false,
     false, NULL, NULL, false, 'cache_control', 4, 4096, '{5m,1h}', 20, true, true),
    ('claude-sonnet-5',   'anthropic', '{anthropic}', NULL, 1000000, 128000, 'cl100k_base',
     '{adaptive,disabled}', 'adaptive', '{low,medium,high,xhigh,max}', '{summarized,omitted}', NULL, NULL, false,
     false, NULL, NULL, false, 'cache_control', 4, 2048, '{5m,1h}', 20, true, true),
    ('claude-fable-5',    'anthropic', '{anthropic}', NULL, 1000000, 128000, 'cl100k_base',
     '{adaptive,disabled}', 'adaptive', '{low,medium,high,xhigh,max}', '{summarized,omitted}', NULL, NULL, false,
     false, NULL, NULL, false, 'cache_control', 4, 2048, '{5m,1h}', 20, true, true),
    ('claude-mythos-5',   'anthropic', '{anthropic}', NULL, 1000000, 128000, 'cl100k_base',
     '{adaptive,disabled}', 'adaptive', '{low,medium,high,xhigh,max}', '{summarized,omitted}', NULL, NULL, false,
     false, NULL, NULL, false, 'cache_control', 4, 4096, '{5m,1h}', 20, true, true),
    ('claude-opus-4-8',   'anthropic', '{anthropic}', NULL, 1000000, 128000, 'cl100k_base',
     '{adaptive,disabled}', 'adaptive', '{low,medium,high,xhigh,max}', '{summarized,omitted}', NULL, NULL, false,
     false, NULL, NULL, false, 'cache_control', 4, 4096, '{5m,1h}', 20, true, true),
    ('claude-opus-4-7',   'anthropic', '{anthropic}', NULL, 1000000, 128000, 'cl100k_base',
     '{adaptive,disabled}', 'adaptive', '{low,medium,high,xhigh,max}', '{summarized,omitted}', NULL, NULL, false,
     false, NULL, NULL, false, 'cache_control', 4, 4096, '{5m,1h}', 20, true, true),
    ('claude-mythos-preview', 'anthropic', '{anthropic}', NULL, 1000000, 128000, 'cl100k_base',
     '{adaptive,disabled}', 'adaptive', '{low,medium,high,max}', '{summarized,omitted}', NULL, NULL, false,
     false, NULL, NULL, false, 'cache_control', 4, 4096, '{5m,1h}', 20, true, true),
-- Opus 4.6, Sonnet 4.6: adaptive or a budget (enabled is deprecated on Opus 4.6), effort,
-- temperature 0-1 or top_p, not both.
    ('claude-opus-4-6',   'anthropic', '{anthropic}', NULL, 1000000, 128000, 'cl100k_base',
     '{adaptive,enabled,disabled}', 'adaptive', '{low,medium,high,max}', '{summarized,omitted}', 1024, 127999, false,
     false, 1, 1, false, 'cache_control', 4, 4096, '{5m,1h}', 20, true, true),
    ('claude-sonnet-4-6', 'anthropic', '{anthropic}', NULL, 1000000, 64000, 'cl100k_base',
     '{adaptive,enabled,disabled}', 'adaptive', '{low,medium,high,max}', '{summarized,omitted}', 1024, 63999, false,
     false, 1, 1, false, 'cache_control', 4, 2048, '{5m,1h}', 20, true, true),
-- The 4.5 family: a thinking budget, effort on Opus 4.5 only, temperature 0-1 or top_p.
    ('claude-opus-4-5',   'anthropic', '{anthropic}', NULL, 200000, 64000, 'cl100k_base',
     '{enabled,disabled}', 'enabled', '{low,medium,high}', '{}', 1024, 63999, false,
     false, 1, 1, false, 'cache_control', 4, 4096, '{5m,1h}', 20, true, true),
    ('claude-sonnet-4-5', 'anthropic', '{anthropic}', NULL, 200000, 64000, 'cl100k_base',
     '{enabled,disabled}', 'enabled', '{}', '{}', 1024, 63999, false,
     false, 1, 1, false, 'cache_control', 4, 1024, '{5m,1h}', 20, true, true),
    ('claude-haiku-4-5',  'anthropic', '{anthropic}', NULL, 200000, 64000, 'cl100k_base',
     '{enabled,disabled}', 'enabled', '{}', '{}', 1024, 63999, false,
     false, 1, 1, false, 'cache_control', 4, 4096, '{5m,1h}', 20, true, true),
-- OpenAI, gpt-6 and gpt-5.6 (the first with prompt_cache_options): reasoning effort none
-- to max (thinking mode disabled is effort none), explicit cache breakpoints (up to four
-- a request, TTL 30m or 12h; Chat 30m).
    ('gpt-6-astra',  'openai', '{responses,chat}', NULL, 2000000, 256000, 'o200k_base',
     '{disabled}', NULL, '{none,low,medium,high,xhigh,max}', '{summarized}', NULL, NULL, false,
     true, NULL, NULL, false, 'prompt_cache_breakpoint', 4, 1024, '{30m,12h}', NULL, true, true),
    ('gpt-6-sol',    'openai', '{responses,chat}', NULL, 1050000, 128000, 'o200k_base',
     '{disabled}', NULL, '{none,low,medium,high,xhigh,max}', '{summarized}', NULL, NULL, false,
     true, NULL, NULL, false, 'prompt_cache_breakpoint', 4, 1024, '{30m,12h}', NULL, true, true),
    ('gpt-6-luna',   'openai', '{responses,chat}', NULL, 400000, 128000, 'o200k_base',
     '{disabled}', NULL, '{none,low,medium,high,xhigh}', '{summarized}', NULL, NULL, false,
     true, NULL, NULL, false, 'prompt_cache_breakpoint', 4, 1024, '{30m,12h}', NULL, true, true),
    ('gpt-5.6-sol',  'openai', '{responses,chat}', NULL, 1050000, 128000, 'o200k_base',
     '{disabled}', NULL, '{none,low,medium,high,xhigh,max}', '{summarized}', NULL, NULL, false,
     true, NULL, NULL, false, 'prompt_cache_breakpoint', 4, 1024, '{30m,12h}', NULL, true, true),
    ('gpt-5.6-terra', 'openai', '{responses,chat}', NULL, 1050000, 128000, 'o200k_base',
     '{disabled}', NULL, '{none,low,medium,high,xhigh,max}', '{summarized}', NULL, NULL, false,
     true, NULL, NULL, false, 'prompt_cache_breakpoint', 4, 1024, '{30m,12h}', NULL, true, true),
    ('gpt-5.6-luna', 'openai', '{responses,chat}', NULL, 400000, 128000, 'o200k_base',
     '{disabled}', NULL, '{none,low,medium,high,xhigh}', '{summarized}', NULL, NULL, false,
     true, NULL, NULL, false, 'prompt_cache_breakpoint', 4, 1024, '{30m,12h}', NULL, true, true),
-- gpt-5.5 to gpt-5.2: reasoning none to xhigh, implicit caching by prompt_cache_key.
    ('gpt-5.5',      'openai', '{responses,chat}', NULL, 1050000, 128000, 'o200k_base',
     '{disabled}', NULL, '{none,low,medium,high,xhigh}', '{summarized}', NULL, NULL, false,
     true, NULL, NULL, false, NULL, 0, 1024, '{}', NULL, true, true),
    ('gpt-5.5-pro',  'openai', '{responses}', NULL, 1050000, 128000, 'o200k_base',
     '{}', NULL, '{medium,high,xhigh}', '{summarized}', NULL, NULL, false,
     true, NULL, NULL, false, NULL, 0, 1024, '{}', NULL, true, true),
    ('gpt-5.4',      'openai', '{responses,chat}', NULL, 1050000, 128000, 'o200k_base',
     '{disabled}', NULL, '{none,low,medium,high,xhigh}', '{summarized}', NULL, NULL, false,
     true, NULL, NULL, false, NULL, 0, 1024, '{}', NULL, true, true),
    ('gpt-5.4-mini', 'openai', '{responses,chat}', NULL, 400000, 128000, 'o200k_base',
     '{disabled}', NULL, '{none,low,medium,high,xhigh}', '{summarized}', NULL, NULL, false,
     true, NULL, NULL, false, NULL, 0, 1024, '{}', NULL, true, true),
    ('gpt-5.4-nano', 'openai', '{responses,chat}', NULL, 400000, 128000, 'o200k_base',
     '{disabled}', NULL, '{none,low,medium,high,xhigh}', '{summarized}', NULL, NULL, false,
     true, NULL, NULL, false, NULL, 0, 1024, '{}', NULL, true, true),
    ('gpt-5.2',      'openai', '{responses,chat}', NULL, 400000, 128000, 'o200k_base',
     '{disabled}', NULL, '{none,low,medium,high,xhigh}', '{summarized}', NULL, NULL, false,
     true, NULL, NULL, false, NULL, 0, 1024, '{}', NULL, true, true),
    ('gpt-5.2-pro',  'openai', '{responses,chat}', NULL, 400000, 128000, 'o200k_base',
     '{}', NULL, '{medium,high,xhigh}', '{summarized}', NULL, NULL, false,
     true, NULL, NULL, false, NULL, 0, 1024, '{}', NULL, true, true),
-- gpt-5.1: none to high; gpt-5: minimal to high.
    ('gpt-5.1',      'openai', '{responses,chat}', NULL, 400000, 128000, 'o200k_base',
     '{disabled}', NULL, '{none,low,medium,high}', '{summarized}', NULL, NULL, false,
     true, NULL, NULL, false, NULL, 0, 1024, '{}', NULL, true, true),
    ('gpt-5',        'openai', '{responses,chat}', NULL, 400000, 128000, 'o200k_base',
     '{}', NULL, '{minimal,low,medium,high}', '{summarized}', NULL, NULL, false,
     true, NULL, NULL, false, NULL, 0, 1024, '{}', NULL, true, true),
-- Not reasoning models: temperature 0-2 and top_p, together.
    ('gpt-4.1',      'openai', '{responses,chat}', NULL, 1047576, 32768, 'o200k_base',
     '{}', NULL, '{}', '{}', NULL, NULL, false,
     true, 2, 1, true, NULL, 0, 1024, '{}', NULL, false, true),
    ('gpt-4o',       'openai', '{responses,chat}', NULL, 128000, 16384, 'o200k_base',
     '{}', NULL, '{}', '{}', NULL, NULL, false,
     true, 2, 1, true, NULL, 0, 1024, '{}', NULL, false, true),
-- Google, Gemini 3.5 on: thinking levels (a budget is refused), thoughts on request,
-- temperature 0-2 and top_p, implicit caching by prefix.
    ('gemini-4-argon',   'google', '{gemini}', NULL, 2097152, 65536, 'o200k_base',
     '{adaptive}', 'adaptive', '{minimal,low,medium,high,xhigh}', '{}', NULL, NULL, true,
     true, 2, 1, true, NULL, 0, 1024, '{}', NULL, true, true),
    ('gemini-3.8-flash', 'google', '{gemini}', NULL, 1048576, 65536, 'o200k_base',
     '{adaptive}', 'adaptive', '{minimal,low,medium,high}', '{}', NULL, NULL, true,
     true, 2, 1, true, NULL, 0, 1024, '{}', NULL, true, true),
    ('gemini-3.7-flash', 'google', '{gemini}', NULL, 1048576, 65536, 'o200k_base',
     '{adaptive}', 'adaptive', '{minimal,low,medium,high}', '{}', NULL, NULL, true,
     true, 2, 1, true, NULL, 0, 1024, '{}', NULL, true, true),
    ('gemini-3.6-flash', 'google', '{gemini}', NULL, 1048576, 65536, 'o200k_base',
     '{adaptive}', 'adaptive', '{minimal,low,medium,high}', '{}', NULL, NULL, true,
     true, 2, 1, true, NULL, 0, 1024, '{}', NULL, true, true),
    ('gemini-3.5-flash', 'google', '{gemini}', NULL, 1048576, 65536, 'o200k_base',
     '{adaptive}', 'adaptive', '{minimal,low,medium,high}', '{}', NULL, NULL, true,
     true, 2, 1, true, NULL, 0, 1024, '{}', NULL, true, true),
    ('gemini-3.5-flash-lite', 'google', '{gemini}', NULL, 1048576, 65536, 'o200k_base',
     '{adaptive}', 'adaptive', '{minimal,low,medium,high}', '{}', NULL, NULL, true,
     true, 2, 1, true, NULL, 0, 1024, '{}', NULL, true, true),
-- Gemini 3 and 3.1 previews: levels, or a budget (still accepted before 3.5).
    ('gemini-3.1-pro-preview', 'google', '{gemini}', NULL, 1048576, 65536, 'o200k_base',
     '{adaptive,enabled}', 'adaptive', '{low,medium,high}', '{}', 128, 32768, true,
     true, 2, 1, true, NULL, 0, 2048, '{}', NULL, true, true),
    ('gemini-3-pro-preview',   'google', '{gemini}', NULL, 1048576, 65536, 'o200k_base',
     '{adaptive,enabled}', 'adaptive', '{low,high}', '{}', 128, 32768, true,
     true, 2, 1, true, NULL, 0, 2048, '{}', NULL, true, true),
    ('gemini-3-flash-preview', 'google', '{gemini}', NULL, 1048576, 65536, 'o200k_base',
     '{adaptive,enabled,disabled}', 'adaptive', '{minimal,low,medium,high}', '{}', 0, 24576, true,
     true, 2, 1, true, NULL, 0, 1024, '{}', NULL, true, true),
-- Gemini 2.5: a budget (0 turns it off on Flash), thoughts on request.
    ('gemini-2.5-pro',   'google', '{gemini}', NULL, 1048576, 65536, 'o200k_base',
     '{adaptive,enabled}', 'adaptive', '{}', '{}', 128, 32768, true,
     true, 2, 1, true, NULL, 0, 2048, '{}', NULL, false, true),
    ('gemini-2.5-flash', 'google', '{gemini}', NULL, 1048576, 65536, 'o200k_base',
     '{adaptive,enabled,disabled}', 'adaptive', '{}', '{}', 0, 24576, true,
     true, 2, 1, true, NULL, 0, 1024, '{}', NULL, false, true)
ON CONFLICT (name) DO NOTHING;

-- Ids the SDKs list that follow a family above: each a row of its own, its family's rules
-- with what differs (name, wires; the SDK's model lists say which wires: ChatModel for
-- chat, ResponsesModel for the Responses-only ids). Windows the SDKs do not give are the
-- family's; prompt.import_models corrects them from the provider's own list.
INSERT INTO prompt.model_profiles
SELECT (pg_catalog.jsonb_populate_record(p, v.changes)).*
  FROM prompt.model_profiles p
  JOIN (VALUES
    -- OpenAI, gpt-6: new sizes of the shipped families.
    ('gpt-6-astra',   '{"name": "gpt-6.2-astra"}'::jsonb),
    ('gpt-6-sol',     '{"name": "gpt-6.1-sol"}'),
    ('gpt-6-sol',     '{"name": "gpt-6.2-sol"}'),
    ('gpt-5.6-terra', '{"name": "gpt-6.1-terra"}'),
    -- Responses-only (ResponsesModel, not ChatModel).
    ('gpt-6-astra',   '{"name": "gpt-6.2-astra-law", "wires": ["responses"]}'),
    ('gpt-6-astra',   '{"name": "gpt-6-astra-healthcare", "wires": ["responses"]}'),
    ('gpt-6-astra',   '{"name": "gpt-6.2-astra-healthcare", "wires": ["responses"]}'),
    ('gpt-6-sol',     '{"name": "gpt-6.1-sol-healthcare", "wires": ["responses"]}'),
    ('gpt-6-sol',     '{"name": "gpt-6.2-sol-healthcare", "wires": ["responses"]}'),
    ('gpt-6-sol',     '{"name": "gpt-6-cyber", "wires": ["responses"]}'),
    ('gpt-6-sol',     '{"name": "gpt-6-rosalind", "wires": ["responses"]}'),
    ('gpt-6-sol',     '{"name": "gpt-rosalind-research", "wires": ["responses"]}'),
    ('gpt-6-sol',     '{"name": "gpt-daybreak-blue-latest", "wires": ["responses"]}'),
    ('gpt-6-sol',     '{"name": "gpt-daybreak-red-latest", "wires": ["responses"]}'),
    ('gpt-4o',        '{"name": "computer-use-preview", "wires": ["responses"], "hard_window": 8192, "max_output_tokens": 1024}'),
    ('gpt-5.6-sol',   '{"name": "gpt-5.6-cyber", "wires": ["responses"]}'),
    ('gpt-5',         '{"name": "gpt-5-pro", "wires": ["responses"], "efforts": ["high"]}'),
    ('gpt-5',         '{"name": "gpt-5-codex", "wires": ["responses"], "efforts": ["low", "medium", "high"]}'),
    ('gpt-5.1',       '{"name": "gpt-5.1-codex-max", "wires": ["responses"], "efforts": ["none", "low", "medium", "high", "xhigh"]}'),
    ('gpt-5',         '{"name": "o3-pro", "wires": ["responses"], "hard_window": 200000, "max_output_tokens": 100000, "efforts": ["low", "medium", "high"]}'),
    ('gpt-5',         '{"name": "o3-deep-research", "wires": ["responses"], "hard_window": 200000, "max_output_tokens": 100000, "efforts": ["medium"]}'),
    ('gpt-5',         '{"name": "o4-mini-deep-research", "wires": ["responses"], "hard_window": 200000, "max_output_tokens": 100000, "efforts": ["medium"]}'),
    ('gpt-5',         '{"name": "o1-pro", "wires": ["responses"], "hard_window": 200000, "max_output_tokens": 100000, "efforts": ["low", "medium", "high"]}'),
    -- Reasoning models of the chat list that are gone or going (lifecycle below).
    ('gpt-5.1',       '{"name": "gpt-5.1-codex"}'),
    ('gpt-5',         '{"name": "o3", "hard_window": 200000, "max_output_tokens": 100000, "efforts": ["low", "medium", "high"]}'),
    ('gpt-5',         '{"name": "o3-mini", "hard_window": 200000, "max_output_tokens": 100000, "efforts": ["low", "medium", "high"]}'),
    ('gpt-5',         '{"name": "o4-mini", "hard_window": 200000, "max_output_tokens": 100000, "efforts": ["low", "medium", "high"]}'),
    ('gpt-5',         '{"name": "o1", "hard_window": 200000, "max_output_tokens": 100000, "efforts": ["low", "medium", "high"]}'),
    ('gpt-5',         '{"name": "o1-mini", "hard_window": 128000, "max_output_tokens": 65536, "efforts": []}'),
    ('gpt-5',         '{"name": "o1-preview", "hard_window": 128000, "max_output_tokens": 32768, "efforts": []}'),
    -- The chat-latest aliases: no reasoning options.
    ('gpt-4o',        '{"name": "gpt-5.3-chat-latest", "hard_window": 128000, "max_output_tokens": 16384}'),
    ('gpt-4o',        '{"name": "gpt-5.2-chat-latest", "hard_window": 128000, "max_output_tokens": 16384}'),
    ('gpt-4o',        '{"name": "gpt-5.1-chat-latest", "hard_window": 128000, "max_output_tokens": 16384}'),
    ('gpt-4o',        '{"name": "gpt-5-chat-latest", "hard_window": 128000, "max_output_tokens": 16384}'),
    ('gpt-4o',        '{"name": "chatgpt-4o-latest"}'),
    ('gpt-4o',        '{"name": "codex-mini-latest", "hard_window": 200000, "max_output_tokens": 100000}'),
    -- Ids of the gpt-4.1 and gpt-4o families that leave before their family.
    ('gpt-4.1',       '{"name": "gpt-4.1-nano"}'),
    ('gpt-4o',        '{"name": "gpt-4o-2024-05-13"}'),
    ('gpt-4o',        '{"name": "gpt-4o-audio-preview"}'),
    ('gpt-4o',        '{"name": "gpt-4o-audio-preview-2024-10-01"}'),
    ('gpt-4o',        '{"name": "gpt-4o-mini-audio-preview"}'),
    ('gpt-4o',        '{"name": "gpt-4o-search-preview"}'),
    ('gpt-4o',        '{"name": "gpt-4o-mini-search-preview"}'),
    ('gpt-4o',        '{"name": "gpt-audio-mini"}'),
    -- gpt-4 and gpt-3.5, all retired or retiring.
    ('gpt-4o',        '{"name": "gpt-4", "hard_window": 8192, "max_output_tokens": 8192, "tokenizer": "cl100k_base"}'),
    ('gpt-4o',        '{"name": "gpt-4-0314", "hard_window": 8192, "max_output_tokens": 8192, "tokenizer": "cl100k_base"}'),
    ('gpt-4o',        '{"name": "gpt-4-32k", "hard_window": 32768, "max_output_tokens": 8192, "tokenizer": "cl100k_base"}'),
    ('gpt-4o',        '{"name": "gpt-4-turbo", "hard_window": 128000, "max_output_tokens": 4096, "tokenizer": "cl100k_base"}'),
    ('gpt-4o',        '{"name": "gpt-4-turbo-preview", "hard_window": 128000, "max_output_tokens": 4096, "tokenizer": "cl100k_base"}'),
    ('gpt-4o',        '{"name": "gpt-4-0125-preview", "hard_window": 128000, "max_output_tokens": 4096, "tokenizer": "cl100k_base"}'),
    ('gpt-4o',        '{"name": "gpt-4-vision-preview", "hard_window": 128000, "max_output_tokens": 4096, "tokenizer": "cl100k_base"}'),
    ('gpt-4o',        '{"name": "gpt-3.5-turbo", "hard_window": 16385, "max_output_tokens": 4096, "tokenizer": "cl100k_base"}'),
    ('gpt-4o',        '{"name": "gpt-3.5-turbo-16k", "hard_window": 16385, "max_output_tokens": 4096, "tokenizer": "cl100k_base"}'),
    ('gpt-4o',        '{"name": "gpt-3.5-turbo-0301", "hard_window": 4096, "max_output_tokens": 4096, "tokenizer": "cl100k_base"}'),
    ('gpt-4o',        '{"name": "gpt-3.5-turbo-0613", "hard_window": 4096, "max_output_tokens": 4096, "tokenizer": "cl100k_base"}'),
    ('gpt-4o',        '{"name": "gpt-3.5-turbo-1106", "hard_window": 16385, "max_output_tokens": 4096, "tokenizer": "cl100k_base"}'),
    -- Google: Gemini 4 beside argon, 3.1 Flash-Lite, and the speech models a flash prefix
    -- would otherwise take (they take no thinking).
    ('gemini-4-argon',   '{"name": "gemini-4-carbon"}'),
    ('gemini-4-argon',   '{"name": "gemini-4-hydrogen"}'),
    ('gemini-4-argon',   '{"name": "gemini-4-neon"}'),
    ('gemini-3.5-flash-lite', '{"name": "gemini-3.1-flash-lite"}'),
    ('gemini-2.5-flash', '{"name": "gemini-2.5-flash-lite"}'),
    ('gemini-2.5-flash', '{"name": "gemini-2.5-flash-image", "thinking_modes": [], "thinking_default": null, "budget_min": null, "budget_max": null, "include_thoughts": false}'),
    ('gemini-3.8-flash', '{"name": "gemini-3.8-flash-tts", "thinking_modes": [], "thinking_default": null, "efforts": [], "include_thoughts": false}'),
    ('gemini-3.8-flash', '{"name": "gemini-3.8-flash-lite-tts", "thinking_modes": [], "thinking_default": null, "efforts": [], "include_thoughts": false}'),
    -- The aliases google-genai 3.6.1 lists ("Latest release of Gemini Flash", "...
    -- Flash-Lite", "... Pro"): the newest of each line it lists.
    ('gemini-3.8-flash',       '{"name": "gemini-flash-latest"}'),
    ('gemini-3.5-flash-lite',  '{"name": "gemini-flash-lite-latest"}'),
    ('gemini-3.1-pro-preview', '{"name": "gemini-pro-latest"}'),
    -- google-genai 3.6.1's other generateContent ids: images, speech, music, transcription,
    -- robotics, omni and the Gemma open models, each on its nearest family's window (the
    -- SDK gives none; prompt.import_models corrects it), without thinking but the robotics
    -- reasoners'.
    ('gemini-2.5-flash', '{"name": "gemini-3-pro-image", "thinking_modes": [], "thinking_default": null, "budget_min": null, "budget_max": null, "include_thoughts": false}'),
    ('gemini-2.5-flash', '{"name": "gemini-3.1-flash-image", "thinking_modes": [], "thinking_default": null, "budget_min": null, "budget_max": null, "include_thoughts": false}'),
    ('gemini-2.5-flash', '{"name": "gemini-3.1-flash-lite-image", "thinking_modes": [], "thinking_default": null, "budget_min": null, "budget_max": null, "include_thoughts": false}'),
    ('gemini-2.5-flash', '{"name": "gemini-nano-banana-2.1", "thinking_modes": [], "thinking_default": null, "budget_min": null, "budget_max": null, "include_thoughts": false}'),
    ('gemini-2.5-flash', '{"name": "nano-banana-pro-preview", "thinking_modes": [], "thinking_default": null, "budget_min": null, "budget_max": null, "include_thoughts": false}'),
    ('gemini-3.8-flash', '{"name": "gemini-3.1-flash-tts-preview", "thinking_modes": [], "thinking_default": null, "efforts": [], "include_thoughts": false}'),
    ('gemini-3.8-flash', '{"name": "gemini-3.5-transcribe", "thinking_modes": [], "thinking_default": null, "efforts": [], "include_thoughts": false}'),
    ('gemini-3.8-flash', '{"name": "gemini-omni-1.2-flash", "thinking_modes": [], "thinking_default": null, "efforts": [], "include_thoughts": false}'),
    ('gemini-3.8-flash', '{"name": "gemini-omni-1.1-flash", "thinking_modes": [], "thinking_default": null, "efforts": [], "include_thoughts": false}'),
    ('gemini-3.8-flash', '{"name": "gemini-omni-flash-preview", "thinking_modes": [], "thinking_default": null, "efforts": [], "include_thoughts": false}'),
    ('gemini-3.5-flash', '{"name": "gemini-robotics-er-1.6-preview"}'),
    ('gemini-3.5-flash', '{"name": "gemini-robotics-er-2-preview"}'),
    ('gemini-3.5-flash-lite', '{"name": "gemma-4-26b-a4b-it", "thinking_modes": [], "thinking_default": null, "efforts": [], "include_thoughts": false}'),
    ('gemini-3.5-flash-lite', '{"name": "gemma-4-31b-it", "thinking_modes": [], "thinking_default": null, "efforts": [], "include_thoughts": false}'),
    ('gemini-3.8-flash', '{"name": "lyria-3-clip-preview", "thinking_modes": [], "thinking_default": null, "efforts": [], "include_thoughts": false}'),
    ('gemini-3.8-flash', '{"name": "lyria-3-pro-preview", "thinking_modes": [], "thinking_default": null, "efforts": [], "include_thoughts": false}'),
    ('gemini-3.8-flash', '{"name": "lyria-3.5", "thinking_modes": [], "thinking_default": null, "efforts": [], "include_thoughts": false}')
  ) AS v(base, changes) ON p.name = v.base
ON CONFLICT (name) DO NOTHING;

-- Lifecycle: the day a provider stops serving a model and the model it names instead, each
-- with its source (model_profiles.lifecycle_source): anthropic's _data/deprecated_models.py
-- (DEPRECATED_MODELS), the "Deprecated values" of openai's ChatModel and of the Responses
-- model field. google-genai gives no date and still lists gemini-2.5-pro, -flash and
-- -flash-lite: the Gemini rows carry no lifecycle (0.5's days had no source; an operator who
-- reads one on Google's deprecations page sets it with its lifecycle_source, or
-- import_models does). The replacement is the provider's where it names one, else the
-- family's current model, served on the same wire and by the same provider. deprecated_at
-- is left to prompt.import_models (Anthropic's list gives it). A compile for a model past a
-- sourced retires_at is refused (model_retired); one whose retirement is announced, or that
-- is deprecated, compiles with a NOTICE.
UPDATE prompt.model_profiles p
   SET retires_at = v.retires_at::date, replacement = v.replacement,
       lifecycle_source = CASE v.source
           WHEN 'anthropic' THEN 'anthropic 2.17.0: anthropic/_data/deprecated_models.py, DEPRECATED_MODELS'
           WHEN 'anthropic-2.14' THEN 'anthropic 2.14.0: anthropic/_data/deprecated_models.py, DEPRECATED_MODELS (the model left the SDK in 2.15.0)'
           WHEN 'chat' THEN 'openai 3.63.0: openai/types/shared/chat_model.py, ChatModel ("Deprecated values")'
           WHEN 'responses' THEN 'openai 3.63.0: openai/types/responses/response_compact_params.py, model ("Deprecated values")'
       END
  FROM (VALUES
    ('claude-mythos-preview', '2026-06-30', 'claude-mythos-5', 'anthropic'),
    ('claude-opus-4-5', '2027-01-22', 'claude-opus-4-8', 'anthropic'),
    ('claude-sonnet-4-5', '2026-11-30', 'claude-sonnet-4-6', 'anthropic-2.14'),
    ('gpt-5', '2026-12-11', 'gpt-5.5', 'chat'),
    ('o3', '2026-12-11', 'gpt-5.5', 'chat'),
    ('gpt-5.1', '2027-04-01', 'gpt-5.5', 'chat'),
    ('gpt-5.4-nano', '2027-04-01', 'gpt-5.6-luna', 'chat'),
    ('gpt-5.1-codex', '2026-07-23', 'gpt-5.5', 'chat'),
    ('gpt-5.3-chat-latest', '2026-08-10', 'gpt-5.5', 'chat'),
    ('gpt-5.2-chat-latest', '2026-08-10', 'gpt-5.5', 'chat'),
    ('gpt-5.1-chat-latest', '2026-07-23', 'gpt-5.5', 'chat'),
    ('gpt-5-chat-latest', '2026-07-23', 'gpt-5.5', 'chat'),
    ('gpt-4.1', '2027-01-14', 'gpt-5.4', 'chat'),
    ('gpt-4.1-nano', '2026-10-23', 'gpt-5.4-nano', 'chat'),
    ('gpt-4o', '2027-01-14', 'gpt-5.4-mini', 'chat'),
    ('gpt-4o-2024-05-13', '2026-10-23', 'gpt-5.4-mini', 'chat'),
    ('gpt-4o-audio-preview', '2026-05-07', 'gpt-audio-mini', 'chat'),
    ('gpt-4o-audio-preview-2024-10-01', '2025-10-10', 'gpt-audio-mini', 'chat'),
    ('gpt-4o-mini-audio-preview', '2026-05-07', 'gpt-audio-mini', 'chat'),
    ('gpt-4o-search-preview', '2026-07-23', 'gpt-5.4-mini', 'chat'),
    ('gpt-4o-mini-search-preview', '2026-07-23', 'gpt-5.4-mini', 'chat'),
    ('gpt-audio-mini', '2027-01-20', NULL, 'chat'),
    ('chatgpt-4o-latest', '2026-02-17', 'gpt-5.4-mini', 'chat'),
    ('codex-mini-latest', '2026-02-12', 'gpt-5.5', 'chat'),
    ('o4-mini', '2026-10-23', 'gpt-5.4-mini', 'chat'),
    ('o3-mini', '2026-10-23', 'gpt-5.4-mini', 'chat'),
    ('o1', '2026-10-23', 'gpt-5.5', 'chat'),
    ('o1-mini', '2025-10-27', 'gpt-5.4-mini', 'chat'),
    ('o1-preview', '2025-07-28', 'gpt-5.5', 'chat'),
    ('gpt-4', '2026-10-23', 'gpt-5.4', 'chat'),
    ('gpt-4-turbo', '2026-10-23', 'gpt-5.4', 'chat'),
    ('gpt-4-0314', '2026-03-26', 'gpt-5.4', 'chat'),
    ('gpt-4-turbo-preview', '2026-03-26', 'gpt-5.4', 'chat'),
    ('gpt-4-0125-preview', '2026-03-26', 'gpt-5.4', 'chat'),
    ('gpt-4-vision-preview', '2024-12-06', 'gpt-5.4', 'chat'),
    ('gpt-4-32k', '2025-06-06', 'gpt-5.4', 'chat'),
    ('gpt-3.5-turbo', '2026-10-23', 'gpt-5.4-nano', 'chat'),
    ('gpt-3.5-turbo-1106', '2026-09-28', 'gpt-5.4-nano', 'chat'),
    ('gpt-3.5-turbo-16k', '2024-09-13', 'gpt-5.4-nano', 'chat'),
    ('gpt-3.5-turbo-0301', '2024-09-13', 'gpt-5.4-nano', 'chat'),
    ('gpt-3.5-turbo-0613', '2024-09-13', 'gpt-5.4-nano', 'chat'),
    ('o3-deep-research', '2026-07-23', 'gpt-5.5', 'responses'),
    ('o4-mini-deep-research', '2026-07-23', 'gpt-5.5', 'responses'),
    ('computer-use-preview', '2026-07-23', 'gpt-5.5', 'responses'),
    ('gpt-5-codex', '2026-07-23', 'gpt-5.5', 'responses'),
    ('gpt-5.1-codex-max', '2026-07-23', 'gpt-5.5', 'responses'),
    ('o1-pro', '2026-10-23', 'gpt-5.5', 'responses'),
    ('o3-pro', '2026-12-11', 'gpt-5.5', 'responses'),
    ('gpt-5-pro', '2026-12-11', 'gpt-5.5-pro', 'responses')
  ) AS v(name, retires_at, replacement, source)
 WHERE p.name = v.name AND p.shipped;

-- Claude's 5 family takes a system message in place, after the leading run
-- ({"role": "system"} in messages), and thinking between tools (thinking off, the short
-- notes between tool calls returned as thinking blocks): anthropic 2.16's MessageParam and
-- ThinkingConfigParam. prompt.import_models reads what Anthropic's own list says of a model.
UPDATE prompt.model_profiles
   SET system_messages = true, thinking_modes = thinking_modes || '{between_tools}', cache_diagnostics = true
 WHERE shipped AND provider = 'anthropic' AND name ~ '^claude-(opus|sonnet|haiku|fable|mythos)-5';

-- Cache diagnostics against a previous response: Anthropic's diagnostics (the 5 family,
-- above) and OpenAI's prompt_cache_options.comparison_response_id (the Responses models
-- with explicit breakpoints, gpt-5.6 and later).
UPDATE prompt.model_profiles SET cache_diagnostics = true
 WHERE shipped AND provider = 'openai' AND cache_breakpoints = 'prompt_cache_breakpoint' AND 'responses' = ANY (wires);

-- Amazon Bedrock's Converse API (wire converse; botocore's bedrock-runtime service model).
-- Anthropic's models under their Bedrock ids (anthropic.<id>: the version suffix -v1:0,
-- and a cross-region inference profile's geography, us. or global., match as the id),
-- with their family's rules and lifecycle (the replacement named by its Bedrock id);
-- Converse returns no cache diagnostics.
INSERT INTO prompt.model_profiles
SELECT (pg_catalog.jsonb_populate_record(p, pg_catalog.jsonb_build_object(
            'name', 'anthropic.' || p.name, 'wires', '["converse"]'::jsonb, 'cache_diagnostics', false,
            -- The replacement on the same wire: the Bedrock id of the Anthropic model named.
            'replacement', 'anthropic.' || p.replacement))).*
  FROM prompt.model_profiles p
 WHERE p.shipped AND p.provider = 'anthropic'
ON CONFLICT (name) DO NOTHING;

-- Amazon Nova and Meta Llama, as Bedrock publishes them: Nova caches at up to four
-- cachePoints of at least 1,000 tokens each, for 5 minutes; Llama caches nothing (no
-- cachePoint is sent). Temperature and top_p from 0 to 1, together. No thinking options.
INSERT INTO prompt.model_profiles (name, provider, wires, advisory_window, hard_window, max_output_tokens, tokenizer,
    thinking_modes, thinking_default, efforts, thinking_display, budget_min, budget_max, include_thoughts,
    thinking_with_forced_tool, temperature_max, top_p_max, sampling_together,
    cache_breakpoints, max_breakpoints, min_cache_tokens, cache_ttls, cache_lookback, replays_thinking, shipped)
VALUES
    ('amazon.nova-premier', 'amazon', '{converse}', NULL, 1000000, 32000, 'cl100k_base',
     '{}', NULL, '{}', '{}', NULL, NULL, false, true, 1, 1, true, 'cache_control', 4, 1000, '{5m}', 20, false, true),
    ('amazon.nova-pro', 'amazon', '{converse}', NULL, 300000, 10000, 'cl100k_base',
     '{}', NULL, '{}', '{}', NULL, NULL, false, true, 1, 1, true, 'cache_control', 4, 1000, '{5m}', 20, false, true),
    ('amazon.nova-lite', 'amazon', '{converse}', NULL, 300000, 10000, 'cl100k_base',
     '{}', NULL, '{}', '{}', NULL, NULL, false, true, 1, 1, true, 'cache_control', 4, 1000, '{5m}', 20, false, true),
    ('amazon.nova-micro', 'amazon', '{converse}', NULL, 128000, 10000, 'cl100k_base',
     '{}', NULL, '{}', '{}', NULL, NULL, false, true, 1, 1, true, 'cache_control', 4, 1000, '{5m}', 20, false, true),
    ('meta.llama4-maverick-17b-instruct', 'meta', '{converse}', NULL, 1000000, 8192, 'cl100k_base',
     '{}', NULL, '{}', '{}', NULL, NULL, false, true, 1, 1, true, NULL, 0, 0, '{}', NULL, false, true),
    ('meta.llama4-scout-17b-instruct', 'meta', '{converse}', NULL, 3500000, 8192, 'cl100k_base',
     '{}', NULL, '{}', '{}', NULL, NULL, false, true, 1, 1, true, NULL, 0, 0, '{}', NULL, false, true),
    ('meta.llama3-3-70b-instruct', 'meta', '{converse}', NULL, 128000, 8192, 'cl100k_base',
     '{}', NULL, '{}', '{}', NULL, NULL, false, true, 1, 1, true, NULL, 0, 0, '{}', NULL, false, true)
ON CONFLICT (name) DO NOTHING;

-- Compatible providers of the chat wire (docs/guide.md, "Compatible providers"): a model
-- row names its provider (models.provider) and speaks its dialect; these are the models
-- whose rules a first-party page gives. Anything else a host serves, its own model list
-- brings in (prompt.import_models('mistral' | 'groq' | ..., list): windows, output limits,
-- Mistral's deprecations), as that provider's.
-- DeepSeek (api-docs.deepseek.com, "Models & Pricing", the copy of 2026-04-26, read
-- 2026-12-05): V4 Flash and Pro, 1M context, 384K output, thinking on by default with a
-- reasoning effort of high or max; deepseek-chat and deepseek-reasoner are V4 Flash's
-- aliases (without and with thinking), not served after 2026-07-24. No prompt cache key
-- (DeepSeek caches by prefix on its own).
-- gpt-oss (developers.openai.com/api/docs/models/gpt-oss-120b and -20b, read 2026-12-05):
-- OpenAI's open-weight models as the hosts name them (Groq, OpenRouter and Together:
-- openai/gpt-oss-120b; Ollama: gpt-oss:120b), 131,072 tokens in and out, a reasoning effort
-- of low, medium or high; the row names the host (models.provider).
INSERT INTO prompt.model_profiles (name, provider, wires, advisory_window, hard_window, max_output_tokens, tokenizer,
    thinking_modes, thinking_default, efforts, thinking_display, budget_min, budget_max, include_thoughts,
    thinking_with_forced_tool, temperature_max, top_p_max, sampling_together,
    cache_breakpoints, max_breakpoints, min_cache_tokens, cache_ttls, cache_lookback, replays_thinking, shipped)
VALUES
    ('deepseek-v4-pro', 'deepseek', '{chat}', NULL, 1000000, 384000, 'o200k_base',
     '{}', NULL, '{high,max}', '{}', NULL, NULL, false, true, 2, 1, true, NULL, 0, 64, '{}', NULL, true, true),
    ('deepseek-v4-flash', 'deepseek', '{chat}', NULL, 1000000, 384000, 'o200k_base',
     '{}', NULL, '{high,max}', '{}', NULL, NULL, false, true, 2, 1, true, NULL, 0, 64, '{}', NULL, true, true),
    ('deepseek-chat', 'deepseek', '{chat}', NULL, 1000000, 384000, 'o200k_base',
     '{}', NULL, '{}', '{}', NULL, NULL, false, true, 2, 1, true, NULL, 0, 64, '{}', NULL, false, true),
    ('deepseek-reasoner', 'deepseek', '{chat}', NULL, 1000000, 384000, 'o200k_base',
     '{}', NULL, '{high,max}', '{}', NULL, NULL, false, true, 2, 1, true, NULL, 0, 64, '{}', NULL, true, true),
    ('openai/gpt-oss-120b', 'openai', '{chat}', NULL, 131072, 131072, 'o200k_base',
     '{}', NULL, '{low,medium,high}', '{}', NULL, NULL, false, true, 2, 1, true, NULL, 0, 1024, '{}', NULL, false, true),
    ('openai/gpt-oss-20b', 'openai', '{chat}', NULL, 131072, 131072, 'o200k_base',
     '{}', NULL, '{low,medium,high}', '{}', NULL, NULL, false, true, 2, 1, true, NULL, 0, 1024, '{}', NULL, false, true),
    ('gpt-oss:120b', 'ollama', '{chat}', NULL, 131072, 131072, 'o200k_base',
     '{}', NULL, '{low,medium,high}', '{}', NULL, NULL, false, true, 2, 1, true, NULL, 0, 1024, '{}', NULL, false, true),
    ('gpt-oss:20b', 'ollama', '{chat}', NULL, 131072, 131072, 'o200k_base',
     '{}', NULL, '{low,medium,high}', '{}', NULL, NULL, false, true, 2, 1, true, NULL, 0, 1024, '{}', NULL, false, true)
ON CONFLICT (name) DO NOTHING;
UPDATE prompt.model_profiles
   SET retires_at = '2026-07-24', replacement = 'deepseek-v4-flash',
       lifecycle_source = 'api-docs.deepseek.com, "Models & Pricing" (the copy of 2026-04-26, read 2026-12-05): deepseek-chat and deepseek-reasoner are not served after 2026-07-24'
 WHERE shipped AND name IN ('deepseek-chat', 'deepseek-reasoner');
UPDATE prompt.models m SET profile = n.profile FROM pgprompt_named_profiles n
 WHERE m.name = n.name AND m.profile IS DISTINCT FROM n.profile
   AND EXISTS (SELECT 1 FROM prompt.model_profiles p WHERE p.name = n.profile);
ALTER TABLE prompt.models ENABLE TRIGGER models_options;
DROP TABLE pgprompt_named_profiles;

-- Least privilege ---------------------------------------------------------------------

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
CREATE OR REPLACE VIEW prompt.status WITH (security_invoker = true) AS
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
DO $owner$
BEGIN
    IF pg_catalog.quote_ident(current_user) <> '@extowner@' THEN
        GRANT USAGE ON SCHEMA prompt TO @extowner@ WITH GRANT OPTION;
        GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA prompt TO @extowner@ WITH GRANT OPTION;
    END IF;
END
$owner$;
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
CREATE FUNCTION prompt."_grants_before"() RETURNS void
STRICT VOLATILE PARALLEL UNSAFE
SET search_path TO pg_catalog, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_grants_before_wrapper';
CREATE FUNCTION prompt."_grants_after"() RETURNS void
STRICT VOLATILE PARALLEL UNSAFE
SET search_path TO pg_catalog, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_grants_after_wrapper';
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

-- Comments ----------------------------------------------------------------------------

COMMENT ON FUNCTION prompt._conversations_capture() IS
    'Internal trigger: a Side answers as its captured turn''s answerer (filled in when NULL, refused when another) and keeps the captured turn as it stood (captured_round, captured_content, captured_summary, captured_summary_round, captured_cleared).';
COMMENT ON COLUMN prompt.conversations.captured_cleared IS
    'A Side''s captured turn as it stood at the capture: what its requests had cleared of its rounds then (its rounds'' cleared records, oldest first; NULL: none). A record written after the capture is not the Side''s. Filled in by the capture trigger.';
COMMENT ON FUNCTION prompt.explain_turn(uuid, uuid) IS
    'How the body is made: mechanism, model, wire, whether sealed, the compiled messages, cache breakpoints, the preface, the full estimate (with estimate.cleared: each tool result sent cleared, its round, call_id, tool and tokens), a stateful turn''s chain (stateful) and what the provider''s cache should do with it sent now (cache: as prompt.cache_report predicts). Never raises for a budget problem.';
COMMENT ON FUNCTION prompt.estimate_turn(uuid, uuid) IS
    'The token budget of a turn, one row per block in block order, then the tools, then one cleared_tool_result row per tool result the request sends cleared (selected: its round; skipped_reason: its call and tool; tokens: what it would have cost); reports budget problems instead of raising them.';
COMMENT ON VIEW prompt.status IS
    'Per conversation: turns, turns lacking a stored token count for a tokenizer in use (backfill_token_counts), seals, pruned seals, 0.2 seals not converted yet (convert_seals_02), sealed body bytes and their stored size, recorded responses and their billed tokens (sum these for the whole database); and, on every row, the database''s security problems (the critical and warning rows of prompt.security_check()).';
COMMENT ON FUNCTION prompt._unconfined() IS
    'Internal (tenancy policies): whether the current role is not confined: tenancy is off, or it administers the extension (its owner, prompt.administrators, superuser, BYPASSRLS).';
COMMENT ON COLUMN prompt.rounds.sent_digest IS
    'The SHA-256 of what the first request that carried the round sent (its assistant, results, steers and abort): its turn''s continuation (with sent_at), or a later turn''s seal that sent it in history (alone). From then on the round never changes; every later read and verify_seals check it.';
COMMENT ON FUNCTION prompt._rounds_stored() IS
    'Internal trigger (AFTER, on prompt.rounds): what only pgprompt writes of a round (sent_at, sent_digest, sent_estimate, cleared, sent_layout) and a sent round''s content, checked again after every BEFORE trigger.';
COMMENT ON COLUMN prompt.rounds.cleared IS
    'What the request that first carried the round cleared under request_options.clear_tool_results ({"placeholder", "results": [{"round", "call_id"}]}), written with sent_at by pgprompt: every later request of the turn, and every later turn that reads it, sends those results as the placeholder. NULL: it cleared nothing.';
COMMENT ON COLUMN prompt.rounds.sent_layout IS
    'On the newest round a continuation carried, that request''s cache layout, written with sent_at by pgprompt (core laid.rs): how many of its seal''s elements it kept, the blocks of those it appended past what the turn''s previous continuation appended alike, and its request-level marker. cache_report and explain_turn read a run''s requests from it with the seal''s layout, never compiling them again. A stateful turn''s is of the chained form it sent. NULL on the other rounds, on a request sent before 0.6, and on a stateful continuation whose chained form does not extend its seal''s (compiled again when reported, as is one whose chain of layouts does not read). Not covered by a digest: verify_seals checks the rounds it stands for against theirs.';
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
COMMENT ON FUNCTION prompt._tenant_writes_conversation(uuid) IS
    'Internal (tenancy policies): whether the current tenant may write conversation rows of this conversation''s workspace (a Side names a parent of its own workspaces), looked up past row-level security.';
COMMENT ON FUNCTION prompt._turns_write() IS
    'Internal trigger: numbers a turn written without seq; refuses changes to a sealed turn or to what a later seal sent of a turn, a reply without poster_id, a message without role, and invalid inline entries, variables, history intent, input, tools, callables or request options; stores token counts and entry counts.';
COMMENT ON FUNCTION prompt._turns_delete() IS
    'Internal trigger: refuses deleting a sealed turn, or one a later seal sent, unless a permitted pgprompt.allow_history_rewrite is on or the whole conversation goes.';
COMMENT ON FUNCTION prompt._rounds_write() IS
    'Internal trigger: refuses a round whose JSON is not a valid round, naming the path, and any change to a round a request carried (its continuation, or a later seal in history); only pgprompt marks a round sent.';
COMMENT ON FUNCTION prompt._check_options_wire(text, text, text, integer, text, text) IS
    'Internal: the write-time checks of one level''s request options (a model''s, an agent''s or a turn''s) against the wire, max_output_tokens and profile of the model it names (0.5''s; the provider''s dialect is the profile''s or the wire''s maker''s).';
COMMENT ON FUNCTION prompt._check_options_wire(text, text, text, integer, text, text, text, boolean) IS
    'Internal: the write-time checks of one level''s request options (a model''s, an agent''s or a turn''s) against the wire, max_output_tokens, profile, provider and native_images of the model it names.';
COMMENT ON FUNCTION prompt._dialect_known(text, text) IS
    'Internal: whether the wire has a dialect of the provider (the library''s list): the CHECK of models.provider.';
COMMENT ON COLUMN prompt.models.provider IS
    'Whose dialect of the wire the request speaks: on chat openai, azure, mistral, deepseek, xai, groq, together, fireworks, openrouter, ollama or vllm; on anthropic anthropic or vertex; on gemini gemini or vertex. NULL: the profile''s provider where the wire speaks it, else the wire''s maker.';
COMMENT ON FUNCTION prompt.import_models(text, jsonb, boolean) IS
    'Inserts or updates model profiles from what a provider''s model list returned (anthropic: GET /v1/models; openai: GET /v1/models; gemini: models.list; a compatible provider of the chat wire, mistral, deepseek, xai, groq, together, fireworks, openrouter, ollama, vllm or azure: its GET /v1/models, imported as that provider''s, on chat), or its data/models array: windows, output limit, thinking modes and efforts, lifecycle. Returns (name, action): inserted, updated, unchanged, or kept (a row a user changed: overwrite => true replaces it; a row of another provider, always).';
COMMENT ON FUNCTION prompt._model_list_base(text, text) IS
    'Internal: the rules a model imported for the first time starts from: its family''s profile, or the provider''s defaults; an OpenAI id''s wires by _openai_wires.';
COMMENT ON FUNCTION prompt._openai_wires(text) IS
    'Internal: the wires the catalog''s rule gives an OpenAI id: responses alone for a Responses-only kind past its family''s name (pro, codex, deep-research, healthcare, law, cyber, rosalind, research, daybreak, computer-use), else its family''s, else responses and chat.';
COMMENT ON VIEW prompt.model_status IS
    'Every model row and where its profile puts it in its provider''s lifecycle (active, deprecated, retired, unprofiled), its retirement day, replacement, days left, retiring_soon (within 30 days) and the lifecycle''s source (a retirement without one is deprecated, not retired).';
COMMENT ON COLUMN prompt.model_profiles.retires_at IS
    'The day the provider stops serving the model: from then on a fresh compile for it is refused (model_retired), naming the replacement, when lifecycle_source names where the day comes from; without a source, a NOTICE.';
COMMENT ON COLUMN prompt.model_profiles.lifecycle_source IS
    'Where deprecated_at, retires_at and replacement come from: the SDK file and constant, or the provider''s list or page and the day it was read. A retires_at with no source warns (a NOTICE) and never refuses.';

-- pgprompt's own triggers, marked (after the comments of their functions).
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

