/** SearchStore on PostgreSQL. (Being built: every method throws until it is.) */
import type { SearchStore } from '../types.js';
import type { PgDatabase } from './database.js';

const notBuilt = (): never => {
  throw new Error('PgSearchStore is not built yet');
};

export class PgSearchStore implements SearchStore {
  constructor(readonly db: PgDatabase) {}
  search = notBuilt;
}
