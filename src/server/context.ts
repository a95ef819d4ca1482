/**
 * What every route plugin is given: the services, the run registry and the session files.
 * Passed as plugin options rather than reached for, so each plugin states what it uses.
 */
import type { RunRegistry } from './run-registry.js';
import type { NaviServices } from './services.js';
import type { SessionFiles } from './session-files.js';

export interface ServerContext {
  services: NaviServices;
  runs: RunRegistry;
  files: SessionFiles;
}
