-- pgprompt 0.1.0 -> 0.2.0 (frozen: never edit once released)
--
-- * turns.seq: a turn written without seq is numbered per conversation by the write
--   trigger (max + 1), not from a global sequence that explicit seqs could collide with;
-- * turns.own_entries and a covering index: the history a budget leaves out is counted
--   from stored per-turn entry counts, without reading turn text;
-- * prompt._own_entries, and the rounds_count trigger that keeps own_entries.

ALTER TABLE prompt.turns ALTER COLUMN seq DROP DEFAULT;
DROP SEQUENCE prompt.turns_seq;

ALTER TABLE prompt.turns ADD COLUMN own_entries int NOT NULL DEFAULT 1;
ALTER TABLE prompt.turns DROP CONSTRAINT turns_seq_key,
    ADD CONSTRAINT turns_seq_key UNIQUE (conversation_id, seq) INCLUDE (kind, answerer_id, own_entries);

CREATE FUNCTION prompt."_own_entries"(
	"summary" TEXT,
	"summary_round" INT,
	"content" TEXT,
	"round_ns" INT[]
) RETURNS INT
IMMUTABLE PARALLEL SAFE
SET search_path TO pg_catalog, pg_temp
LANGUAGE c
AS 'MODULE_PATHNAME', '_own_entries_wrapper';

CREATE OR REPLACE FUNCTION prompt._turns_write() RETURNS trigger
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

-- Existing reply turns get their entry counts.
UPDATE prompt.turns t
   SET own_entries = prompt._own_entries(t.summary, t.summary_round, t.content,
           ARRAY(SELECT n FROM prompt.rounds r WHERE r.conversation_id = t.conversation_id AND r.turn_id = t.id))
 WHERE t.kind = 'reply';

COMMENT ON FUNCTION prompt._rounds_count() IS
    'Internal trigger: keeps turns.own_entries when rounds are added or removed.';
COMMENT ON FUNCTION prompt._own_entries(text, integer, text, integer[]) IS
    'Internal: the history entries of a reply turn read by its own answerer, as the compiler plans them.';
COMMENT ON FUNCTION prompt._turns_write() IS
    'Internal trigger: numbers a turn written without seq, refuses changes to sealed columns and invalid inline entries, variables, history intent, input, tools or callables; stores token counts and entry counts.';
COMMENT ON COLUMN prompt.turns.own_entries IS
    'The history entries of this turn read by its own answerer; kept by the write triggers so a budget counts what it leaves out without reading it.';
COMMENT ON FUNCTION prompt.estimate_turn(uuid, uuid) IS
    'The token budget of a turn, one row per block in block order; reports budget problems instead of raising them.';
