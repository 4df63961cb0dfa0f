// What can keep the bridge from using its database at start; each is one line for the operator (O11).

/** DATABASE_URL names nothing the bridge can use (another scheme, no path). */
export class DatabaseUrlError extends Error {}

/** The database named by a usable DATABASE_URL could not be opened (a folder in its place, not SQLite, no server, no access). */
export class DatabaseOpenError extends Error {}

/** Another bridge uses the database, and a second one would split its clients between two routers (O7, O13). */
export class DatabaseInUseError extends Error {}
