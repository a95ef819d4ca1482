/**
 * Wraps one tool of an MCP server as an ordinary `ToolDefinition`, so its calls take the
 * executor's path (validation, policy, confirmation, timeout, truncation) like any other.
 */
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { REVEALED_META_KEY } from '../protocol/mcp-meta.js';
import type { SessionFileWriter } from '../tools/session-file-writer.js';
import { fail, type JsonSchema, type ToolDefinition, type ToolResult } from '../tools/types.js';
import type { McpConnection } from './connection.js';
import { isNaviUiServer } from './naming.js';
import { convertCallResult, DEFAULT_MAX_IMAGE_CHARS } from './result.js';
import { keepResultFiles } from './result-files.js';
import { asksBeforeEveryCall, mcpToolRisk } from './tool-risk.js';

export interface AdapterLimits {
  timeoutMs: number;
  maxOutputChars: number;
}

/** The tool's JSON Schema, without the `$schema` keyword that some validators and LLM APIs reject. */
export function toolParameters(tool: Tool): JsonSchema {
  const { $schema: _ignored, ...schema } = tool.inputSchema as Record<string, unknown>;
  return { ...schema, type: 'object' };
}

export function mcpToolDefinition(
  registeredName: string,
  tool: Tool,
  connection: McpConnection,
  limits: AdapterLimits,
  files?: SessionFileWriter,
): ToolDefinition {
  const config = connection.config;
  const group = config.group;
  const description =
    tool.description ?? tool.title ?? `Tool "${tool.name}" of the MCP server ${config.name}.`;
  return {
    name: registeredName,
    description,
    parameters: toolParameters(tool),
    ...(group !== undefined && { group }),
    risk: mcpToolRisk(tool.annotations, group, asksBeforeEveryCall(config, tool.name)),
    async execute(params, ctx) {
      try {
        const result = await connection.call(
          tool.name,
          params,
          ctx.signal,
          config.timeoutMs ?? limits.timeoutMs,
          // What the server asks back during the call reaches the person watching this run.
          {
            sessionId: ctx.sessionId,
            runId: ctx.runId,
            callId: ctx.callId,
            confirm: ctx.confirm,
            ...(ctx.elicit && { elicit: ctx.elicit }),
          },
        );
        const converted = convertCallResult(result, {
          maxChars: limits.maxOutputChars * 2,
          maxImageChars: DEFAULT_MAX_IMAGE_CHARS,
          naviUi: isNaviUiServer(config.key),
        });
        if (group === 'secrets') keepRevealed(result, converted);
        return files ? await keepResultFiles(converted, result, tool.name, files, ctx) : converted;
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        return fail(
          message.startsWith('MCP') ? message : `MCP tool ${tool.name} of ${config.name} failed: ${message}`,
        );
      }
    },
  };
}

/**
 * A secrets server (gnexus-creds) names the values a result reveals on purpose in
 * `_meta["navi/revealed"]`; the executor shows them this once and masks them from then on.
 */
function keepRevealed(result: CallToolResult, converted: ToolResult): void {
  const revealed = result._meta?.[REVEALED_META_KEY];
  if (!Array.isArray(revealed) || revealed.length === 0) return;
  converted.metadata = { ...converted.metadata, revealed };
}
