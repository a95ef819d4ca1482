/** KvStore on PostgreSQL. (Being built: every method throws until it is.) */
import type { KvStore } from '../types.js';
import type { PgDatabase } from './database.js';

const notBuilt = (): never => {
  throw new Error('PgKvStore is not built yet');
};

export class PgKvStore implements KvStore {
  constructor(readonly db: PgDatabase) {}
  get = notBuilt;
  set = notBuilt;
  delete = notBuilt;
  clear = notBuilt;
}
