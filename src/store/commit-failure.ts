// What a failed group commit says about its rows. Only an error about what a row holds condemns rows: the writer
// then looks for them and drops them alone. Anything else (the database unreachable, restarting, locked, out of
// disk, a password changed, an error nobody foresaw) says nothing against the rows and may pass: they are kept and
// the commit retried, the queue's bound keeping memory in check meanwhile.

/**
 * SQLSTATE classes of a row PostgreSQL cannot store as it is: 22 data exception (a value too long or out of range, a
 * NUL in text), 23 integrity constraint violation.
 */
const REFUSED_SQLSTATE = /^2[23][0-9A-Z]{3}$/;

/** SQLite's result codes for the same, and for a statement too large (smaller ones then pass). */
const REFUSED_SQLITE = new Set(['SQLITE_CONSTRAINT', 'SQLITE_MISMATCH', 'SQLITE_RANGE', 'SQLITE_TOOBIG']);

/** Whether the database refused the commit for rows it holds, so that retrying them as they are cannot succeed. */
export function refusesRows(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (REFUSED_SQLSTATE.test(code) || REFUSED_SQLITE.has(code));
}

/**
 * A failure as the log shows it: the driver's code and message, without the statement knex puts before the message
 * (`<statement> - <message>`, the statement without its values: database.ts), which for a group commit is
 * thousands of placeholders.
 */
export function failureOf(err: unknown): { code?: string; message: string } {
  const code = (err as { code?: unknown } | null)?.code;
  let message = err instanceof Error ? err.message : String(err);
  const statementEnds = message.indexOf(' - ');
  if (/^(INSERT INTO|DELETE FROM) /.test(message) && statementEnds >= 0) message = message.slice(statementEnds + 3);
  return typeof code === 'string' ? { code, message } : { message };
}
