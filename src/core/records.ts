// How the core holds the wire shapes generated from spec/: the same fields with the same types, except that a
// timestamp is epoch milliseconds (the clock's unit, and the database's) where the wire has ISO 8601 text. Records
// are derived from the generated types, so a field added to the spec appears here, or fails to compile where a
// record is built.

/** The fields of `T` that hold text (possibly null): the ones that can be timestamps on the wire. */
type TextKey<T> = { [P in keyof T]-?: T[P] extends string | null | undefined ? P : never }[keyof T];

/** `T` with its timestamps `K` as epoch milliseconds instead of ISO 8601 strings; null stays null. */
export type EpochMs<T, K extends TextKey<T>> = { [P in keyof T]: P extends K ? Exclude<T[P], string> | number : T[P] };
