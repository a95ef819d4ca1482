/**
 * The agent's MCP tools (`mcp_status`, `test_mcp_tool`, `create_mcp_server`, `read_mcp_resource`;
 * docs/mcp.md#tools-for-the-agent), built over
 * one McpManager, for registration as built-ins.
 */
import type { ToolDefinition } from '../../tools/types.js';
import type { McpManager } from '../manager.js';
import { createCreateMcpServerTool } from './create-mcp-server.js';
import { createMcpStatusTool } from './mcp-status.js';
import { createReadMcpResourceTool } from './read-mcp-resource.js';
import { createTestMcpTool, type TestMcpToolOptions } from './test-mcp-tool.js';

export { createCreateMcpServerTool, createMcpStatusTool, createReadMcpResourceTool, createTestMcpTool };

/**
 * `options.profileFor` lets test_mcp_tool and read_mcp_resource apply the caller's policy
 * (always pass it in Navi).
 */
export function createMcpTools(manager: McpManager, options: TestMcpToolOptions = {}): ToolDefinition[] {
  return [
    createMcpStatusTool(manager),
    createTestMcpTool(manager, options),
    createCreateMcpServerTool(manager),
    createReadMcpResourceTool(manager, options),
  ];
}
