/**
 * The REST calls of the settings' insight pages (memory, tools, MCP servers) and of signing
 * out (docs/protocol.md#rest). Failures are `ApiError`s carrying the server's sentence.
 */
import type {
  McpServerInfo,
  McpStatusView,
  MemoryFactPage,
  MemoryFactRecord,
  MemorySearchResults,
  MemorySummaryView,
  ToolLoadErrorInfo,
  ToolSummary,
} from '@protocol/rest.js';
import { request } from './api.js';
import type { FactDraft } from './insight.js';

function query(params: Record<string, string | number | undefined>): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params))
    if (value !== undefined) search.set(name, String(value));
  const text = search.toString();
  return text ? `?${text}` : '';
}

const factPath = (id: number) => `/memory/facts/${encodeURIComponent(String(id))}`;
const serverPath = (name: string, action: string) =>
  `/agents/mcp/servers/${encodeURIComponent(name)}/${action}`;

export const insightApi = {
  memorySummary: () => request<MemorySummaryView>('GET', '/memory/summary'),
  memoryFacts: (page: { offset: number; limit: number; category?: string }) =>
    request<MemoryFactPage>('GET', `/memory/facts${query(page)}`),
  searchMemory: (q: string, limit = 50) =>
    request<MemorySearchResults>('GET', `/memory/search${query({ q, limit })}`),
  updateFact: (id: number, patch: Partial<FactDraft>) =>
    request<MemoryFactRecord>('PATCH', factPath(id), patch),
  // Sent without a body, so without a JSON content type (the server refuses an empty JSON body).
  forgetFact: (id: number) => request<void>('DELETE', factPath(id)),
  tools: (profileId?: string) =>
    request<ToolSummary[]>('GET', `/agents/tools${query({ profile_id: profileId })}`),
  toolErrors: () => request<ToolLoadErrorInfo[]>('GET', '/agents/tools/errors'),
  reloadTools: () =>
    request<{ loaded: string[]; providers: string[]; errors: { origin: string; error: string }[] }>(
      'POST',
      '/agents/tools/reload',
    ),
  mcpStatus: () => request<McpStatusView>('GET', '/agents/mcp'),
  restartMcp: (name: string) => request<McpServerInfo>('POST', serverPath(name, 'restart')),
  approveMcp: (name: string, command: string) =>
    request<McpServerInfo>('POST', serverPath(name, 'approve'), { command }),
  reloadMcp: () => request<McpStatusView>('POST', '/agents/mcp/reload'),
  logout: () => request<{ ok: true }>('POST', '/auth/logout'),
};
