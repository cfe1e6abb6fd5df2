-- A small, realistic example: a support desk on Postgres, written with plain INSERTs.
-- Used by the demo (scripts/demo.sh) and by the psql golden files (tests/regress).
--
-- Ada owns an account at Acme; Lark is Acme's support agent, stewarded by Ada's
-- colleague Omar. Ids are fixed so the output is the same on every machine.

INSERT INTO prompt.models (name, wire, tokenizer, advisory_window, hard_window, max_output_tokens) VALUES
    ('claude-sonnet-5', 'anthropic', 'cl100k_base', 180000, 200000, 1024),
    ('gpt-5.5',            'chat',      'o200k_base',  128000, 128000, 1024);

INSERT INTO prompt.workspaces (id, name, timezone) VALUES
    ('00000000-0000-4000-8000-00000000a001', 'Acme Support', 'Europe/Paris');

INSERT INTO prompt.users (id, handle, display_name, kind) VALUES
    ('00000000-0000-4000-8000-000000000001', 'ada',  'Ada Lovelace', 'human'),
    ('00000000-0000-4000-8000-000000000003', 'omar', 'Omar Haddad',  'human');
INSERT INTO prompt.users (id, handle, display_name, kind, steward_id, model, application) VALUES
    ('00000000-0000-4000-8000-000000000002', 'lark', 'Lark', 'agent',
     '00000000-0000-4000-8000-000000000003', 'claude-sonnet-5', 'helpdesk');

INSERT INTO prompt.documents (user_id, workspace_id, name, body) VALUES
    ('00000000-0000-4000-8000-000000000002', NULL, 'system_prompt',
     'You are {{agent}}, the support agent of {{workspace}}. Today is {{date}}. You are helping {{user}}.'),
    (NULL, '00000000-0000-4000-8000-00000000a001', 'character',
     '{{workspace}} sells accounting software to small businesses. Be exact about invoices and amounts.'),
    ('00000000-0000-4000-8000-000000000001', NULL, 'persona',
     'Ada is the account owner. She wants the invoice number first and no small talk.');

INSERT INTO prompt.conversations (id, workspace_id, answerer_id, creator_id, origin_channel) VALUES
    ('00000000-0000-4000-8000-00000000c001', '00000000-0000-4000-8000-00000000a001',
     '00000000-0000-4000-8000-000000000002', '00000000-0000-4000-8000-000000000001', 'email');

INSERT INTO prompt.memories (scope, user_id, conversation_id, path, body) VALUES
    ('agent', '00000000-0000-4000-8000-000000000002', NULL, 'policies/refunds.md',
     'Duplicate charges are refunded in full within 5 business days.'),
    ('conversation', NULL, '00000000-0000-4000-8000-00000000c001', 'ticket.md',
     'Ticket #5521: duplicate charge on INV-2041 (EUR 49.00).');

INSERT INTO prompt.turns (conversation_id, id, seq, kind, role, author_id, content, created_at) VALUES
    ('00000000-0000-4000-8000-00000000c001', '00000000-0000-4000-8000-0000000d0001', 1, 'message', 'user',
     '00000000-0000-4000-8000-000000000001', 'Hi, I was charged twice for invoice INV-2041.', '2026-11-30 09:00+00');
INSERT INTO prompt.turns (conversation_id, id, seq, kind, poster_id, prompt, content, created_at) VALUES
    ('00000000-0000-4000-8000-00000000c001', '00000000-0000-4000-8000-0000000d0002', 2, 'reply',
     '00000000-0000-4000-8000-000000000001', 'Can you check?',
     'INV-2041: I see two charges of EUR 49.00 on 28 November. I can refund the second one.', '2026-11-30 09:01+00');
INSERT INTO prompt.turns (conversation_id, id, seq, kind, role, author_id, content, created_at) VALUES
    ('00000000-0000-4000-8000-00000000c001', '00000000-0000-4000-8000-0000000d0003', 3, 'message', 'user',
     '00000000-0000-4000-8000-000000000001', 'Yes please, refund the duplicate.', '2026-11-30 09:05+00');
-- The turn to compile: Ada's words open it; a tail entry asks for brevity.
INSERT INTO prompt.turns (conversation_id, id, seq, kind, poster_id, prompt, inline, created_at) VALUES
    ('00000000-0000-4000-8000-00000000c001', '00000000-0000-4000-8000-0000000d0004', 4, 'reply',
     '00000000-0000-4000-8000-000000000001', 'And send me the credit note, please.',
     '[{"text": "Answer in two sentences at most.", "position": "tail"}]', '2026-11-30 23:30+00');
