"""The skills catalog through SQL: sources resolve application, agent, workspace, in
that order, first source winning per name. The fixtures give the workspace a skill
named like the agent's own, with a different description, so the winner shows."""
from conftest import compile_turn

R = ("00000000-0000-4000-8000-00000000c002", "00000000-0000-4000-8000-0000000f0001")


def test_the_first_source_wins_per_name(db):
    system = compile_turn(db, *R, fn="sealed_body")["system"]
    catalog = [b["text"] for b in system if b["text"].startswith("Skills available now.")]
    assert catalog == [
        "Skills available now.\n"
        "- skill / triage: Triage a new ticket.\n"
        "- skill / refunds [00000000-0000-4000-8000-0000000e0001]: Issue a refund for a duplicate charge.\n"
        "- skill / billing-export: Export billing data as CSV."
    ]
    listed = db.execute("SELECT count(*) FROM prompt.skills WHERE name = 'refunds'").fetchone()[0]
    assert listed == 2, "both sources hold a refunds skill; only the agent's is listed"
