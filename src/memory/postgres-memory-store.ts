/** MemoryStore on PostgreSQL. (Being built: every method throws until it is.) */
import type { PgDatabase } from '../store/postgres/index.js';
import type { MemoryStore } from './types.js';

const notBuilt = (): never => {
  throw new Error('PgMemoryStore is not built yet');
};

export class PgMemoryStore implements MemoryStore {
  constructor(readonly db: PgDatabase) {}
  upsert = notBuilt;
  upsertMany = notBuilt;
  get = notBuilt;
  getByKey = notBuilt;
  list = notBuilt;
  recent = notBuilt;
  count = notBuilt;
  update = notBuilt;
  delete = notBuilt;
  search = notBuilt;
  missingEmbeddings = notBuilt;
  setEmbedding = notBuilt;
  setEmbeddings = notBuilt;
  nearest = notBuilt;
  getSummary = notBuilt;
  setSummary = notBuilt;
  factsRevision = notBuilt;
  getSessionState = notBuilt;
  listSessionStates = notBuilt;
  setSessionState = notBuilt;
}
