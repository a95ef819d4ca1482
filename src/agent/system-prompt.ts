/**
 * The system prompt, built once per run and never stored (see docs/architecture.md#the-agent-loop): persona, then the
 * profile's prompt, then the memory block, then the short sections of context providers.
 */
export interface PromptSection {
  name: string;
  content: string;
}

export interface SystemPromptParts {
  persona: string;
  profilePrompt: string;
  /** `## What I remember about the user` block, or null when memory is empty. */
  memoryBlock: string | null;
  sections: PromptSection[];
  /** For subagents that inherit their parent's prompt: it comes first, as a base layer. */
  basePrompt?: string;
}

export function buildSystemPrompt(parts: SystemPromptParts): string {
  const blocks: string[] = [];
  if (parts.basePrompt?.trim()) blocks.push(parts.basePrompt.trim());
  blocks.push(parts.persona.trim());
  if (parts.profilePrompt.trim()) blocks.push(parts.profilePrompt.trim());
  if (parts.memoryBlock?.trim()) blocks.push(parts.memoryBlock.trim());
  for (const s of parts.sections) {
    if (s.content.trim()) blocks.push(`## ${s.name}\n${s.content.trim()}`);
  }
  return blocks.join('\n\n');
}
