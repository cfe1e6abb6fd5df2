-- Per-workspace tenancy for pgprompt with row-level security: an example policy set.
--
-- pgprompt's functions run as the caller (no SECURITY DEFINER), so the policies on
-- the tables decide what a compile reads. Here each tenant is a role; a role sees the
-- workspaces it is a member of, the conversations in them (and their turns and
-- rounds), the people and agents of those workspaces and their documents, memory and
-- skills. Models are shared.
--
--   psql -f examples/tenancy.sql                     -- as the extension's owner
--   CREATE ROLE acme_app LOGIN PASSWORD '...';       -- the application's role
--   INSERT INTO tenancy.members VALUES ('acme_app', '<workspace id>');
--   INSERT INTO tenancy.workspace_users VALUES ('<workspace id>', '<user id>');
--   GRANT prompt_tenant TO acme_app;
--
-- A role confined to workspace A asking for workspace B's conversation gets
-- conversation_not_found (P0002), and a compile in A never reads B's rows.

CREATE SCHEMA IF NOT EXISTS tenancy;

-- Which role may use which workspace, and which users belong to a workspace.
CREATE TABLE tenancy.members (
    role_name    name NOT NULL,
    workspace_id uuid NOT NULL REFERENCES prompt.workspaces (id) ON DELETE CASCADE,
    PRIMARY KEY (role_name, workspace_id)
);
CREATE TABLE tenancy.workspace_users (
    workspace_id uuid NOT NULL REFERENCES prompt.workspaces (id) ON DELETE CASCADE,
    user_id      uuid NOT NULL REFERENCES prompt.users (id) ON DELETE CASCADE,
    PRIMARY KEY (workspace_id, user_id)
);

-- The group role tenants are granted: ordinary privileges, nothing more.
DO $$ BEGIN
    CREATE ROLE prompt_tenant NOLOGIN;
EXCEPTION WHEN duplicate_object THEN NULL;
END $$;
GRANT USAGE ON SCHEMA prompt, tenancy TO prompt_tenant;
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA prompt TO prompt_tenant;
GRANT SELECT ON tenancy.members, tenancy.workspace_users TO prompt_tenant;

ALTER TABLE tenancy.members ENABLE ROW LEVEL SECURITY;
CREATE POLICY own_rows ON tenancy.members USING (role_name = current_user);
ALTER TABLE tenancy.workspace_users ENABLE ROW LEVEL SECURITY;
CREATE POLICY own_workspaces ON tenancy.workspace_users
    USING (workspace_id IN (SELECT workspace_id FROM tenancy.members));

ALTER TABLE prompt.workspaces ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant ON prompt.workspaces
    USING (id IN (SELECT workspace_id FROM tenancy.members));

ALTER TABLE prompt.users ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant ON prompt.users
    USING (id IN (SELECT user_id FROM tenancy.workspace_users));

ALTER TABLE prompt.conversations ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant ON prompt.conversations
    USING (workspace_id IN (SELECT workspace_id FROM tenancy.members));

ALTER TABLE prompt.turns ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant ON prompt.turns
    USING (conversation_id IN (SELECT id FROM prompt.conversations));

ALTER TABLE prompt.rounds ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant ON prompt.rounds
    USING (conversation_id IN (SELECT id FROM prompt.conversations));

ALTER TABLE prompt.seals ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant ON prompt.seals
    USING (conversation_id IN (SELECT id FROM prompt.conversations));

ALTER TABLE prompt.seals_02 ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant ON prompt.seals_02
    USING (conversation_id IN (SELECT id FROM prompt.conversations));

ALTER TABLE prompt.seal_nodes ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant ON prompt.seal_nodes
    USING (conversation_id IN (SELECT id FROM prompt.conversations));

ALTER TABLE prompt.responses ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant ON prompt.responses
    USING (conversation_id IN (SELECT id FROM prompt.conversations));

ALTER TABLE prompt.documents ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant ON prompt.documents
    USING (workspace_id IN (SELECT workspace_id FROM tenancy.members)
           OR user_id IN (SELECT user_id FROM tenancy.workspace_users));

ALTER TABLE prompt.memories ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant ON prompt.memories
    USING (CASE scope
        WHEN 'workspace'    THEN workspace_id IN (SELECT workspace_id FROM tenancy.members)
        WHEN 'conversation' THEN conversation_id IN (SELECT id FROM prompt.conversations)
        WHEN 'speaker'      THEN user_id IN (SELECT user_id FROM tenancy.workspace_users)
                                 AND speaker_id IN (SELECT user_id FROM tenancy.workspace_users)
        ELSE user_id IN (SELECT user_id FROM tenancy.workspace_users)
    END);

ALTER TABLE prompt.skills ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant ON prompt.skills
    USING (CASE source
        WHEN 'workspace' THEN workspace_id IN (SELECT workspace_id FROM tenancy.members)
        WHEN 'speaker'   THEN user_id IN (SELECT user_id FROM tenancy.workspace_users)
                              AND speaker_id IN (SELECT user_id FROM tenancy.workspace_users)
        WHEN 'runner'      THEN true
        WHEN 'application' THEN true
        ELSE user_id IN (SELECT user_id FROM tenancy.workspace_users)
    END);
