/**
 * The built-in tools that act on the agent itself or look back at its work: spawn_agent,
 * switch_profile, list_profiles, reflect. They reach the running agent only through
 * `ctx.agent` (an AgentHandle), never by importing src/agent.
 */
import type { Profile, ProfileRegistry } from '../../config/profiles.js';
import type { LlmBackend } from '../../llm/types.js';
import type { KvStore, SessionStore } from '../../store/types.js';
import type { ToolDefinition } from '../types.js';
import { createListProfilesTool } from './list-profiles.js';
import { createReflectTool } from './reflect.js';
import { createSpawnAgentTool } from './spawn-agent.js';
import { createSwitchProfileTool } from './switch-profile.js';

export interface AgentToolsDeps {
  profiles: ProfileRegistry;
  /** SUBAGENT_MAX_DEPTH. */
  maxSubagentDepth: number;
  sessions: SessionStore;
  kv: KvStore;
  backendFor: (profile: Profile) => LlmBackend;
  /** KvStore key of the todo tool (default 'todo'). */
  todoKey?: string;
  /** KvStore key of the scratchpad tool (default 'scratchpad'). */
  scratchpadKey?: string;
}

export function createAgentTools(deps: AgentToolsDeps): ToolDefinition[] {
  return [
    createSpawnAgentTool({ profiles: deps.profiles, maxDepth: deps.maxSubagentDepth }),
    createSwitchProfileTool({ profiles: deps.profiles }),
    createListProfilesTool({ profiles: deps.profiles }),
    createReflectTool({
      sessions: deps.sessions,
      kv: deps.kv,
      profiles: deps.profiles,
      backendFor: deps.backendFor,
      ...(deps.todoKey ? { todoKey: deps.todoKey } : {}),
      ...(deps.scratchpadKey ? { scratchpadKey: deps.scratchpadKey } : {}),
    }),
  ];
}
