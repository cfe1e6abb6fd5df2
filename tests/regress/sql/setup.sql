-- Every regress file runs in this database, after this one.
CREATE EXTENSION pgprompt;
\i demo/example.sql
SELECT count(*) AS turns FROM prompt.turns;
