/**
 * How the gnexus-creds tools talk to the vault: every refusal (`VaultError`) becomes an error
 * result the model can act on, and every change is audited with the Navi session the request
 * names.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { SESSION_META_KEY } from '../../protocol/mcp-meta.js';
import { type AuditContext, type Vault, VaultError } from '../../vault/types.js';
import { type ToolRequest, toolError } from '../common/tool.js';

export interface GnexusToolDeps {
  vault: Vault;
}

const SESSION_ID = /^[A-Za-z0-9_-]{1,200}$/;

/**
 * Who asks, for the audit log: the agent, in the session the request names. A session id that
 * is not a plain token is left out rather than written into the audit log.
 */
export function auditContext(request: ToolRequest | undefined, tool: string, reason?: string): AuditContext {
  const session = request?.meta[SESSION_META_KEY];
  return {
    actor: 'agent',
    tool,
    ...(typeof session === 'string' && SESSION_ID.test(session) && { session_id: session }),
    ...(reason !== undefined && reason !== '' && { reason }),
  };
}

/** The vault's messages are clauses; the model reads them as sentences. */
function sentence(text: string): string {
  const trimmed = text.trim();
  const capital = trimmed.charAt(0).toUpperCase() + trimmed.slice(1);
  return /[.!?]$/.test(capital) ? capital : `${capital}.`;
}

function refusal(tool: string, err: VaultError): string {
  switch (err.code) {
    case 'locked':
      return err.locked
        ? `The secrets vault is locked, so ${tool} cannot run: ${sentence(err.locked.reason)} ${sentence(err.locked.howToUnlock)}`
        : `The secrets vault is locked, so ${tool} cannot run: ${sentence(err.message)}`;
    case 'not_found':
      return `${tool}: ${sentence(err.message)}`;
    case 'invalid':
      return `${tool} was refused: ${sentence(err.message)}`;
    case 'audit_failed':
      return `${tool} was not done, because the vault could not write its audit log: ${sentence(err.message)} Tell the person.`;
    default:
      return `${tool} failed: ${sentence(err.message)} Tell the person.`;
  }
}

/** Runs `work` against the vault; a VaultError becomes an error result saying what to do. */
export async function withVault(tool: string, work: () => CallToolResult): Promise<CallToolResult> {
  try {
    return work();
  } catch (err) {
    if (err instanceof VaultError) return toolError(refusal(tool, err));
    throw err;
  }
}
