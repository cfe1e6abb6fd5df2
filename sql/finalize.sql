-- pgprompt: write-time refusals (SPEC §2) as triggers, and the comments that make
-- \d+ and \df+ explain themselves. Runs after the extension's functions exist.

-- The tokenizers whose counts a write stores: those of the models in use.
CREATE FUNCTION prompt._tokenizers_in_use() RETURNS text[]
LANGUAGE sql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$ SELECT coalesce(array_agg(DISTINCT tokenizer ORDER BY tokenizer), ARRAY['cl100k_base']) FROM prompt.models $$;

CREATE FUNCTION prompt._documents_write() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM prompt._check_document(NEW.name, NEW.body);
    IF TG_OP = 'UPDATE' THEN
        NEW.version := OLD.version + 1;
        NEW.updated_at := now();
    END IF;
    RETURN NEW;
END
$$;

CREATE TRIGGER documents_write BEFORE INSERT OR UPDATE ON prompt.documents
    FOR EACH ROW EXECUTE FUNCTION prompt._documents_write();

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

CREATE FUNCTION prompt._turns_write() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    tokenizers text[];
BEGIN
    IF TG_OP = 'INSERT' AND NEW.seq IS NULL THEN
        PERFORM pg_advisory_xact_lock(hashtextextended(NEW.conversation_id::text, 20261130));
        NEW.seq := coalesce((SELECT max(seq) FROM prompt.turns WHERE conversation_id = NEW.conversation_id), 0) + 1;
    END IF;
    IF TG_OP = 'UPDATE' AND OLD.sealed_at IS NOT NULL AND (
           NEW.sealed_at        IS DISTINCT FROM OLD.sealed_at
        OR NEW.sealed_request   IS DISTINCT FROM OLD.sealed_request
        OR NEW.sealed_preface   IS DISTINCT FROM OLD.sealed_preface
        OR NEW.sealed_catalog   IS DISTINCT FROM OLD.sealed_catalog
        OR NEW.sealed_mechanism IS DISTINCT FROM OLD.sealed_mechanism
        OR NEW.sealed_versions  IS DISTINCT FROM OLD.sealed_versions) THEN
        PERFORM prompt._refuse_sealed_update(OLD.conversation_id, OLD.id);
    END IF;
    IF TG_OP = 'INSERT'
       OR NEW.inline    IS DISTINCT FROM OLD.inline
       OR NEW.variables IS DISTINCT FROM OLD.variables
       OR NEW.history   IS DISTINCT FROM OLD.history
       OR NEW.input     IS DISTINCT FROM OLD.input
       OR NEW.tools     IS DISTINCT FROM OLD.tools
       OR NEW.callables IS DISTINCT FROM OLD.callables THEN
        PERFORM prompt._check_turn(NEW.inline::text, NEW.variables::text, NEW.history::text,
                                   NEW.input::text, NEW.tools::text, NEW.callables::text);
    END IF;
    IF TG_OP = 'INSERT'
       OR NEW.content IS DISTINCT FROM OLD.content
       OR NEW.prompt  IS DISTINCT FROM OLD.prompt
       OR NEW.kind    IS DISTINCT FROM OLD.kind THEN
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
       OR NEW.summary_round IS DISTINCT FROM OLD.summary_round THEN
        NEW.own_entries := prompt._own_entries(NEW.summary, NEW.summary_round, NEW.content,
            ARRAY(SELECT n FROM prompt.rounds r WHERE r.conversation_id = NEW.conversation_id AND r.turn_id = NEW.id));
    END IF;
    RETURN NEW;
END
$$;

CREATE TRIGGER turns_write BEFORE INSERT OR UPDATE ON prompt.turns
    FOR EACH ROW EXECUTE FUNCTION prompt._turns_write();

CREATE FUNCTION prompt._rounds_write() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM prompt._check_round(NEW.turn_id, NEW.n, NEW.assistant::text, NEW.results::text, NEW.steers::text);
    RETURN NEW;
END
$$;

CREATE TRIGGER rounds_write BEFORE INSERT OR UPDATE ON prompt.rounds
    FOR EACH ROW EXECUTE FUNCTION prompt._rounds_write();

-- A round added or removed changes its turn's entry count.
CREATE FUNCTION prompt._rounds_count() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    r record;
BEGIN
    IF TG_OP = 'DELETE' THEN r := OLD; ELSE r := NEW; END IF;
    UPDATE prompt.turns t
       SET own_entries = prompt._own_entries(t.summary, t.summary_round, t.content,
               ARRAY(SELECT n FROM prompt.rounds x WHERE x.conversation_id = t.conversation_id AND x.turn_id = t.id))
     WHERE t.conversation_id = r.conversation_id AND t.id = r.turn_id;
    RETURN NULL;
END
$$;

CREATE TRIGGER rounds_count AFTER INSERT OR DELETE OR UPDATE OF n ON prompt.rounds
    FOR EACH ROW EXECUTE FUNCTION prompt._rounds_count();

-- Comments -----------------------------------------------------------------------

COMMENT ON TABLE prompt.models IS
    'A model a request is compiled for: its wire (anthropic, chat), tokenizer, windows, image support, token margin and max_output_tokens. name is the provider''s model id.';
COMMENT ON TABLE prompt.users IS
    'People and agents. An agent has a steward (its controlling Human), a prompt_mechanism (default, assembly, raw), an optional prompt_template, a model and an application.';
COMMENT ON TABLE prompt.workspaces IS
    'The room a conversation lives in; its timezone dates {{date}}.';
COMMENT ON TABLE prompt.documents IS
    'Prompt documents: slot rows (system_prompt on an agent, character on a workspace, persona on a human) and durable documents (SOUL, MISSION, ...) on an agent. One per owner and name; a write bumps version and updated_at. Macros are checked on write.';
COMMENT ON TABLE prompt.memories IS
    'Memory entries by scope (agent, workspace, speaker, user, conversation) and path; rows under skills/ never render as memory.';
COMMENT ON TABLE prompt.skills IS
    'Skill documents for the catalog, by source (runner, application, agent, workspace, speaker, user); recall_only skills are never listed.';
COMMENT ON TABLE prompt.conversations IS
    'One timeline: its workspace, kind, stored answerer, creator and origin channel.';
COMMENT ON TABLE prompt.turns IS
    'The timeline, ordered by seq: message, reply and summary turns. A reply turn is what compile_turn compiles; its sealed_* columns hold what was sent and never change once set.';
COMMENT ON TABLE prompt.rounds IS
    'The model rounds of a run-backed reply turn: the assistant''s text and tool calls, the results with their captures, the steers read mid-round, and whether it was aborted.';

COMMENT ON COLUMN prompt.turns.content_tokens IS
    'Token counts of content as history renders it bare, {cl100k_base, o200k_base}; kept by the write trigger.';
COMMENT ON COLUMN prompt.turns.prompt_tokens IS
    'Token counts of prompt, {cl100k_base, o200k_base}; kept by the write trigger.';
COMMENT ON COLUMN prompt.turns.own_entries IS
    'The history entries of this turn read by its own answerer; kept by the write triggers so a budget counts what it leaves out without reading it.';
COMMENT ON COLUMN prompt.turns.sealed_request IS
    'The result of the first compile_turn of this turn, whole: what was sent.';

COMMENT ON FUNCTION prompt.compile_turn(uuid, uuid) IS
    'Compiles the request for the reply turn''s next model call and seals it on the first call; later calls return the sealed request, plus the rounds written since.';
COMMENT ON FUNCTION prompt.preview_turn(uuid, uuid) IS
    'What compile_turn would return, without writing anything; works read-only and on hot standbys.';
COMMENT ON FUNCTION prompt.estimate_turn(uuid, uuid) IS
    'The token budget of a turn, one row per block in block order; reports budget problems instead of raising them.';
COMMENT ON FUNCTION prompt.validate_template(jsonb) IS
    'Every problem of an assembly template as (JSON-pointer path, code, message); no rows means valid.';
COMMENT ON FUNCTION prompt.count_tokens(text, text) IS
    'The number of tokens of a text as ordinary text, for cl100k_base (default) or o200k_base, exactly as tiktoken counts.';
COMMENT ON FUNCTION prompt.escape_envelope(text) IS
    'Escapes a body for the inside of a speaker envelope, so it can neither open nor close one.';
COMMENT ON FUNCTION prompt.unescape_envelope(text) IS
    'The exact inverse of escape_envelope.';
COMMENT ON FUNCTION prompt._tokenizers_in_use() IS
    'Internal: the tokenizers of the models in use, whose counts the turns trigger stores.';
COMMENT ON FUNCTION prompt._documents_write() IS
    'Internal trigger: refuses unknown macros and bodies over 64 KiB; bumps version and updated_at.';
COMMENT ON FUNCTION prompt._users_write() IS
    'Internal trigger: refuses an invalid prompt_template with its JSON-pointer path.';
COMMENT ON FUNCTION prompt._workspaces_write() IS
    'Internal trigger: refuses an unknown timezone.';
COMMENT ON FUNCTION prompt._touch_updated_at() IS
    'Internal trigger: sets updated_at on update.';
COMMENT ON FUNCTION prompt._turns_write() IS
    'Internal trigger: numbers a turn written without seq, refuses changes to sealed columns and invalid inline entries, variables, history intent, input, tools or callables; stores token counts and entry counts.';
COMMENT ON FUNCTION prompt._rounds_count() IS
    'Internal trigger: keeps turns.own_entries when rounds are added or removed.';
COMMENT ON FUNCTION prompt._own_entries(text, integer, text, integer[]) IS
    'Internal: the history entries of a reply turn read by its own answerer, as the compiler plans them.';
COMMENT ON FUNCTION prompt._rounds_write() IS
    'Internal trigger: refuses a round whose JSON is not a valid round, naming the path.';
COMMENT ON FUNCTION prompt._check_document(text, text) IS
    'Internal: the write-time checks of a document body.';
COMMENT ON FUNCTION prompt._check_template(text, text, jsonb) IS
    'Internal: the write-time checks of a prompt_template.';
COMMENT ON FUNCTION prompt._check_turn(text, text, text, text, text, text) IS
    'Internal: the write-time checks of a turn''s JSON columns.';
COMMENT ON FUNCTION prompt._check_round(uuid, integer, text, text, text) IS
    'Internal: the write-time checks of a round.';
COMMENT ON FUNCTION prompt._row_tokens(text, text, text[]) IS
    'Internal: the stored token counts of a turn text, one slot per tokenizer.';
COMMENT ON FUNCTION prompt._refuse_sealed_update(uuid, uuid) IS
    'Internal: raises sealed_turn_immutable.';
COMMENT ON FUNCTION prompt._refuse_timezone(text) IS
    'Internal: raises timezone_invalid.';
