-- validate_template: one row per problem with its JSON-pointer path; never an exception.
SELECT * FROM prompt.validate_template('{"blocks": [{"type": "history"}, {"type": "input"}]}');
SELECT * FROM prompt.validate_template('{
  "blocks": [
    {"type": "slot", "slot": "system_prompt"},
    {"type": "inline", "role": "system", "text": "Today''s scene is {{scene}}."},
    {"type": "slot", "slot": "persona"},
    {"type": "memory"},
    {"type": "skills"},
    {"type": "lead"},
    {"type": "history", "max_entries": 40, "budget": {"share": 0.6, "min_tokens": 512}},
    {"type": "tail"},
    {"type": "input"}
  ],
  "variables": {"scene": "an ordinary day"}
}');
SELECT * FROM prompt.validate_template('{
  "blocks": [
    {"type": "memory"},
    {"type": "inline", "role": "system", "text": "{{history}} {{scene}}"},
    {"type": "slot", "slot": "soul"},
    {"type": "document", "name": "soul"},
    {"type": "history", "max_entries": 0, "budget": {"share": 2, "ratio": 1}},
    {"type": "memory"},
    {"type": "poem"},
    {"type": "input"},
    {"type": "tail"}
  ],
  "variables": {"Scene": "x", "date": "y", "n": 1},
  "extra": true
}');
SELECT t.v AS template, p.path, p.code
FROM (VALUES ('null'::jsonb), ('1'), ('"x"'), ('[]'), ('{}'), ('{"blocks": []}')) t(v),
     prompt.validate_template(t.v) p;
