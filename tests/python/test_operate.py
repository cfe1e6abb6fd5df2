"""The operator's side: the prompt.status view, the backend memo's statistics and its
capacity setting, the compile time warning, and pgprompt.allow_history_rewrite as a
registered setting."""
import psycopg

from conftest import connect, make_database

C1, T4 = "00000000-0000-4000-8000-00000000c001", "00000000-0000-4000-8000-0000000d0004"


def test_status_memo_and_settings():
    c = make_database("pgprompt_operate")
    try:
        st = c.execute("SELECT turns, turns_missing_counts, seals, sealed_bytes FROM prompt.status "
                       "WHERE conversation_id = %s", (C1,)).fetchone()
        assert st[:3] == (4, 0, 0) and st[3] == 0
        c.execute("SELECT prompt.compile_turn(%s, %s)", (C1, T4))
        bytes_ = c.execute("SELECT octet_length(prompt.sealed_body(%s, %s)::text)", (C1, T4)).fetchone()[0]
        assert c.execute("SELECT seals, sealed_bytes FROM prompt.status WHERE conversation_id = %s",
                         (C1,)).fetchone() == (1, bytes_)
        # A tokenizer the stored turns lack shows, and the backfill clears it.
        # (Turns written before a model brought o200k_base: stored counts are the write
        # trigger's own, so its absence is simulated with the trigger off.)
        c.execute("ALTER TABLE prompt.turns DISABLE TRIGGER turns_write")
        c.execute("UPDATE prompt.turns SET content_tokens = ARRAY[content_tokens[1], NULL] "
                  "WHERE conversation_id = %s AND content IS NOT NULL", (C1,))
        c.execute("ALTER TABLE prompt.turns ENABLE TRIGGER turns_write")
        missing = c.execute("SELECT turns_missing_counts FROM prompt.status WHERE conversation_id = %s", (C1,)).fetchone()[0]
        assert missing > 0, "the demo's models use both tokenizers"
        c.execute("CALL prompt.backfill_token_counts('o200k_base')")
        assert c.execute("SELECT sum(turns_missing_counts) FROM prompt.status").fetchone()[0] == 0

        # The memo: the second preview is answered from it; its capacity is a setting.
        # (An unsealed turn: a sealed one's preview reads its stored body.)
        turn = c.execute("INSERT INTO prompt.turns (conversation_id, kind, poster_id, prompt) "
                       "VALUES (%s, 'reply', '00000000-0000-4000-8000-000000000001', 'Is it done?') RETURNING id::text",
                       (C1,)).fetchone()[0]
        c.execute("SELECT prompt.preview_turn(%s, %s)", (C1, turn))
        hits = c.execute("SELECT hits FROM prompt.memo_stats()").fetchone()[0]
        c.execute("SELECT prompt.preview_turn(%s, %s)", (C1, turn))
        assert c.execute("SELECT hits FROM prompt.memo_stats()").fetchone()[0] > hits
        c.execute("SET pgprompt.memo_capacity = 4")
        # What is over the new capacity goes at the next generations, not all at once.
        for _ in range(3):
            c.execute("SELECT prompt.preview_turn(%s, %s)", (C1, turn))
        entries, capacity = c.execute("SELECT entries, capacity FROM prompt.memo_stats()").fetchone()
        assert capacity == 4 and entries <= 4
        c.execute("RESET pgprompt.memo_capacity")

        # The compile time warning.
        warnings = []
        c.add_notice_handler(lambda d: warnings.append((d.severity_nonlocalized, d.message_primary)))
        c.execute("SET pgprompt.compile_time_warning = 1")
        c.execute("SELECT pg_sleep(0) FROM prompt.preview_turn(%s, %s)", (C1, turn))
        c.execute("SET pgprompt.compile_time_warning = 0")
        c.execute("SELECT prompt.preview_turn(%s, %s)", (C1, turn))
        # Whether the compile took a millisecond is the machine's business; the format is ours.
        assert all(s == "WARNING" and m.startswith(f"pgprompt: compiling turn {turn} took ") for s, m in warnings)

        # allow_history_rewrite is a registered boolean.
        try:
            c.execute("SET pgprompt.allow_history_rewrite = maybe")
            raise AssertionError("a boolean setting refuses maybe")
        except psycopg.Error as e:
            assert e.sqlstate == "22023"
        assert c.execute("SHOW pgprompt.allow_history_rewrite").fetchone()[0] == "off"
    finally:
        c.close()
        with connect("postgres") as admin:
            admin.execute("DROP DATABASE pgprompt_operate")


def test_functions_name_the_library_without_libdir(db):
    """module_pathname is the plain name: packaging that mounts extensions outside
    $libdir (dynamic_library_path, as CloudNativePG's extension images do) finds it."""
    paths = db.execute("SELECT DISTINCT probin FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace "
                       "WHERE n.nspname = 'prompt' AND p.prolang = (SELECT oid FROM pg_language WHERE lanname = 'c')"
                       ).fetchall()
    assert paths == [("pgprompt",)]
