/** Reading the answers of Navi's MCP server with the official SDK client, for its tests. */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult, Progress } from '@modelcontextprotocol/sdk/types.js';
import { readDotEnv } from '../../src/config/settings.js';
import { repoRoot } from './navi.js';

/**
 * `env` for a `navi mcp` child, with every variable the checkout's .env sets passed blank (a
 * blank setting is unset): `navi mcp` works in the checkout, and a developer's .env there (their
 * DATABASE_URL, their LLM) must not reach a test.
 */
export function withoutCheckoutDotEnv(env: Record<string, string>): Record<string, string> {
  const blanks = Object.fromEntries(Object.keys(readDotEnv(repoRoot)).map((name) => [name, '']));
  return { ...blanks, ...env };
}

/** The text of every text item of a tool result, joined by newlines. */
export function textOf(result: CallToolResult): string {
  return result.content
    .filter((item) => item.type === 'text')
    .map((item) => item.text)
    .join('\n');
}

export interface AskResult {
  result: CallToolResult;
  answer: string;
  sessionId: string;
  progress: Progress[];
}

/** Calls `ask_navi`, collecting its progress notifications. */
export async function askNavi(
  client: Client,
  args: Record<string, unknown>,
  options: { signal?: AbortSignal } = {},
): Promise<AskResult> {
  const progress: Progress[] = [];
  const result = (await client.callTool({ name: 'ask_navi', arguments: args }, undefined, {
    onprogress: (p) => progress.push(p),
    ...(options.signal ? { signal: options.signal } : {}),
  })) as CallToolResult;
  const structured = (result.structuredContent ?? {}) as { answer?: string; session_id?: string };
  return { result, answer: structured.answer ?? '', sessionId: structured.session_id ?? '', progress };
}

/** Calls a tool and returns its result as the SDK client hands it over. */
export async function call(
  client: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}
