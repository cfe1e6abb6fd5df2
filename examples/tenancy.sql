-- Per-workspace tenancy for pgprompt (README, "Security").
--
-- pgprompt's tables carry the extension's own row-level security policies. Tenancy is
-- declared: an administrator turns it on (prompt.set_tenancy(true), below) and only one
-- turns it off. Once it is on, a role listed in prompt.tenants is a tenant, confined to
-- its workspaces: it reads their conversations (turns, rounds, seals, responses), the
-- people and agents that are members of them (prompt.workspace_members) with their
-- documents, memory and skills, and what is shared (models, runner and application
-- skills); it writes only rows that no other tenant's compile reads, so an agent two
-- tenants share, its documents and memory, the models and the shared skills are read-only
-- to both. A role listed nowhere reads and writes no tenant's rows, unless it administers
-- the extension (its owner, a role in prompt.administrators, a superuser or BYPASSRLS
-- role). The policies come back with the extension and the tenancy rows with the data, so
-- pg_dump and pg_restore keep the isolation as it was.
--
-- pgprompt's functions run as the caller (no SECURITY DEFINER), so these policies decide
-- what a compile reads. Run this as the extension's owner; then, per tenant:
--
--   CREATE ROLE acme_app LOGIN PASSWORD '...';                    -- the application's role
--   GRANT prompt_tenant TO acme_app;
--   INSERT INTO prompt.tenants VALUES ('acme_app', '<workspace id>');
--   INSERT INTO prompt.workspace_members VALUES ('<workspace id>', '<user id>');  -- each member
--
-- A tenant confined to workspace A asking for workspace B's conversation gets
-- conversation_not_found (P0002), a compile in A never reads B's rows, and a write to a
-- row B's compiles read is refused (42501, a row-level security violation, or no row
-- changed).

-- The group role tenants are granted: ordinary privileges, nothing more (the policies
-- narrow them to the tenant's rows).
-- (Made here when missing; a database owner without CREATEROLE asks a role that has it.)
DO $$ BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = 'prompt_tenant') THEN
        CREATE ROLE prompt_tenant NOLOGIN;
    END IF;
END $$;
GRANT USAGE ON SCHEMA prompt TO prompt_tenant;
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA prompt TO prompt_tenant;
-- Tenancy on: from now on a role that is not an administrator reads and writes only what
-- prompt.tenants lists it for (nothing, until it is listed).
SELECT prompt.set_tenancy(true);
