-- The speaker envelope's escaping: exactly the four forms, reversibly.
SELECT prompt.escape_envelope('<message from="@x"> </message> <task_result> </task_result>');
SELECT prompt.escape_envelope('a < b && <b>bold</b> &lt;message &amp;lt;/task_result');
SELECT prompt.unescape_envelope(prompt.escape_envelope(s)) = s AS roundtrip
FROM (VALUES ('&lt;<message'), ('&&lt;message'), ('plain'), ('')) v(s);
