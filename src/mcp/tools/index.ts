/**
 * The MCP tools of DESIGN §9 (`mcp_status`, `test_mcp_tool`, `create_mcp_server`), built over
 * one McpManager, for registration as built-ins.
 */
import type { ToolDefinition } from '../../tools/types.js';
import type { McpManager } from '../manager.js';
import { createCreateMcpServerTool } from './create-mcp-server.js';
import { createMcpStatusTool } from './mcp-status.js';
import { createTestMcpTool } from './test-mcp-tool.js';

export { createCreateMcpServerTool, createMcpStatusTool, createTestMcpTool };

export function createMcpTools(manager: McpManager): ToolDefinition[] {
  return [createMcpStatusTool(manager), createTestMcpTool(manager), createCreateMcpServerTool(manager)];
}
