/** FileStore on PostgreSQL. (Being built: every method throws until it is.) */
import type { FileStore } from '../types.js';
import type { PgDatabase } from './database.js';

const notBuilt = (): never => {
  throw new Error('PgFileStore is not built yet');
};

export class PgFileStore implements FileStore {
  constructor(readonly db: PgDatabase) {}
  add = notBuilt;
  get = notBuilt;
  list = notBuilt;
  remove = notBuilt;
  expired = notBuilt;
}
