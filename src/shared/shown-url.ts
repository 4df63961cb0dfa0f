// A URL as it may be shown in a log line or an error (DATABASE_URL, REDIS_URL): a password never, whether in the
// user part (`postgres://bridge:secret@host/db`, `redis://:secret@host`) or a parameter (`?password=…`, which the
// pg driver reads too).

/**
 * The URL with every password as `***`, the user name kept (it says which role to check). Everything up to the
 * last `@` counts as the user part, so an unencoded `@` or `/` in a password is hidden too (the rare `@` in a later
 * parameter is hidden with it).
 */
export function shownUrl(url: string): string {
  return url
    .replace(/^([a-z][a-z0-9+.-]*:\/\/[^:@/?#]*):.*@/i, '$1:***@')
    .replace(/([?&][^=&#]*password[^=&#]*=)[^&#]*/gi, '$1***');
}
