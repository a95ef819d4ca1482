/** ConsentStore on PostgreSQL. (Being built: every method throws until it is.) */
import type { ConsentStore } from '../types.js';
import type { PgDatabase } from './database.js';

const notBuilt = (): never => {
  throw new Error('PgConsentStore is not built yet');
};

export class PgConsentStore implements ConsentStore {
  constructor(readonly db: PgDatabase) {}
  createPairingCode = notBuilt;
  redeemPairingCode = notBuilt;
  isPaired = notBuilt;
  unpair = notBuilt;
  unpairAll = notBuilt;
}
