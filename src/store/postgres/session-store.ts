/** SessionStore on PostgreSQL. (Being built: every method throws until it is.) */
import type { SessionStore } from '../types.js';
import type { PgDatabase } from './database.js';

const notBuilt = (): never => {
  throw new Error('PgSessionStore is not built yet');
};

export class PgSessionStore implements SessionStore {
  constructor(readonly db: PgDatabase) {}
  create = notBuilt;
  get = notBuilt;
  list = notBuilt;
  update = notBuilt;
  delete = notBuilt;
  getMessages = notBuilt;
  getMessagePage = notBuilt;
  getMessage = notBuilt;
  getContext = notBuilt;
  isInContext = notBuilt;
  append = notBuilt;
  updateMessage = notBuilt;
  replaceContextPrefix = notBuilt;
  rewind = notBuilt;
}
