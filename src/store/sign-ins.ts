// Dashboard sign-ins as rows (D1): in the database every node reads, so a sign-in made on one node is good on all of
// them and outlives a restart, and a sign-out ends it everywhere at once. The cookie itself is never stored: only
// its SHA-256, like the clients' tokens.
import type { Knex } from 'knex';

export interface SignInRow {
  /** Hex SHA-256 of the cookie's value. */
  key: string;
  csrf_token: string;
  created_at: number;
  expires_at: number;
}

export class SignInStore {
  constructor(private readonly db: Knex) {}

  async insert(row: SignInRow): Promise<void> {
    await this.db('dashboard_sign_ins').insert(row);
  }

  async find(key: string): Promise<SignInRow | undefined> {
    return this.db<SignInRow>('dashboard_sign_ins').where({ key }).first();
  }

  async delete(key: string): Promise<void> {
    await this.db('dashboard_sign_ins').where({ key }).delete();
  }

  /** Deletes the sign-ins expired at `now`, and all but the newest `keep` of the others; returns how many went. */
  async prune(now: number, keep: number): Promise<number> {
    const expired = await this.db('dashboard_sign_ins').where('expires_at', '<=', now).delete();
    const newest = this.db('dashboard_sign_ins').select('key').orderBy('created_at', 'desc').offset(keep);
    const over = await this.db('dashboard_sign_ins').whereIn('key', newest).delete();
    return expired + over;
  }
}
