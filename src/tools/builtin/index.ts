/**
 * The core built-in tools of the tool system: todo, scratchpad, reload_tools, list_tools,
 * tool_manual and write_tool. Other built-ins (filesystem, terminal, memory…) are created by
 * their own factories and registered by the composition root.
 */
import type { Logger } from 'pino';
import type { Settings } from '../../config/settings.js';
import type { KvStore } from '../../store/types.js';
import type { ToolRegistry } from '../registry.js';
import type { ToolDefinition } from '../types.js';
import type { ReloadableFolder } from '../user-tools.js';
import { createListToolsTool } from './list-tools.js';
import { createReloadToolsTool } from './reload-tools.js';
import { createScratchpadTool } from './scratchpad.js';
import { createTodoTool } from './todo.js';
import { createToolManualTool } from './tool-manual.js';
import { createWriteToolTool } from './write-tool.js';

export interface CoreToolsDeps {
  registry: ToolRegistry;
  kv: KvStore;
  settings: Pick<Settings, 'TOOLS_DIR' | 'MANUALS_DIR'>;
  /** Reloaded together with the user tools by reload_tools and write_tool. */
  providers?: ReloadableFolder;
  logger?: Logger;
}

/** Creates the core tools and registers them in `deps.registry` as built-ins; returns them. */
export function createCoreTools(deps: CoreToolsDeps): ToolDefinition[] {
  const reload = {
    registry: deps.registry,
    toolsDir: deps.settings.TOOLS_DIR,
    ...(deps.providers ? { providers: deps.providers } : {}),
    ...(deps.logger ? { logger: deps.logger } : {}),
  };
  const tools = [
    createTodoTool(deps.kv),
    createScratchpadTool(deps.kv),
    createReloadToolsTool(reload),
    createListToolsTool(deps.registry),
    createToolManualTool({ registry: deps.registry, manualsDir: deps.settings.MANUALS_DIR }),
    createWriteToolTool(reload),
  ];
  for (const tool of tools) deps.registry.register({ tool, source: 'builtin' });
  return tools;
}

export { createListToolsTool } from './list-tools.js';
export { createReloadToolsTool, formatReloadReport } from './reload-tools.js';
export { createScratchpadTool, SCRATCHPAD_KV_KEY } from './scratchpad.js';
export {
  createTodoTool,
  formatTodos,
  isOpen,
  readTodos,
  TODO_KV_KEY,
  type TodoItem,
  type TodoStatus,
} from './todo.js';
export { createToolManualTool, generateManual } from './tool-manual.js';
export { createWriteToolTool, missingExports } from './write-tool.js';
