/** RecallStore on PostgreSQL. (Being built: every method throws until it is.) */
import type { RecallStore } from '../types.js';
import type { PgDatabase } from './database.js';

const notBuilt = (): never => {
  throw new Error('PgRecallStore is not built yet');
};

export class PgRecallStore implements RecallStore {
  constructor(readonly db: PgDatabase) {}
  add = notBuilt;
  get = notBuilt;
  listForSession = notBuilt;
  countActive = notBuilt;
  soonest = notBuilt;
  update = notBuilt;
}
