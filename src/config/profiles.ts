/**
 * Agent profiles (docs/architecture.md#settings-and-profiles): data files in PROFILES_DIR, one JSON object per file, validated
 * at start-up. A broken file is reported by name and skipped; the others load.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';

/**
 * The tools that may use vault secrets by reference when a profile names none: the ones that
 * act on the world with a credential (a command, a script, an SSH session, an HTTP request).
 */
export const DEFAULT_SECRET_TOOLS = [
  'terminal',
  'process',
  'code_exec',
  'ssh_exec',
  'mcp__navi_web__http_request',
] as const;

/** The LLM backends a profile's `backends` section may name. */
export const PROFILE_BACKEND_IDS = ['ollama', 'openai', 'llamacpp'] as const;

/**
 * What changes when a run uses one backend: `enabled_tools` replaces the profile's, `denied_tools`
 * adds to the profile's, `tool_budget_ratio` replaces TOOL_BUDGET_RATIO. A small local model
 * can so get fewer tools than a large hosted one under the same profile.
 */
export const backendToolPolicySchema = z.strictObject({
  enabled_tools: z.array(z.string().min(1)).optional(),
  denied_tools: z.array(z.string().min(1)).optional(),
  tool_budget_ratio: z.number().min(0.01).max(1).optional(),
});

export type BackendToolPolicy = z.infer<typeof backendToolPolicySchema>;

const backendsSchema = z
  .record(z.string(), backendToolPolicySchema)
  .superRefine((backends, ctx) => {
    for (const id of Object.keys(backends)) {
      if (!(PROFILE_BACKEND_IDS as readonly string[]).includes(id))
        ctx.addIssue({
          code: 'custom',
          path: [id],
          message: `unknown backend "${id}": use one of ${PROFILE_BACKEND_IDS.join(', ')}`,
        });
    }
  })
  .default({});

export const profileSchema = z.object({
  id: z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, 'id: letters, digits, _ and - only (1–64)'),
  name: z.string().min(1).max(200),
  /** What the profile is for, in a sentence or two: the new-chat dialog and the header show it. */
  description: z.string().max(500).default(''),
  system_prompt: z.string().default(''),
  /** Tool names, globs (`mcp__navi_web__*`, `*`) and groups (`group:fs`) the profile may use. */
  enabled_tools: z.array(z.string().min(1)).default(['*']),
  /** Patterns refused even when `enabled_tools` allows them: deny beats allow. */
  denied_tools: z.array(z.string().min(1)).default([]),
  /** Extra patterns whose calls need the user's approval, on top of the shipped defaults. */
  confirm_tools: z.array(z.string().min(1)).default([]),
  /** Patterns that never need approval, overriding the shipped defaults. */
  trusted_tools: z.array(z.string().min(1)).default([]),
  /** `strict` asks before every tool that changes anything; `autonomous` asks before nothing. */
  autonomy: z.enum(['strict', 'standard', 'autonomous']).default('standard'),
  model: z.string().min(1).nullable().optional(),
  llm_backend: z.string().min(1).nullable().optional(),
  temperature: z.number().min(0).max(2).default(0.7),
  max_iterations: z.number().int().min(1).max(1000).default(50),
  planning_enabled: z.boolean().default(false),
  scratchpad_sections: z.array(z.string().min(1)).default([]),
  /**
   * Whether code_exec and terminal get outbound network inside the sandbox (never the host's
   * loopback; private ranges only with HTTP_ALLOW_PRIVATE). Off unless a profile asks for it.
   */
  network_access: z.boolean().default(false),
  /**
   * Tools (names, globs, groups) whose arguments may carry vault references
   * (`{{secret:<id>.<field>}}`), substituted with the secret's value when the call runs.
   */
  secret_tools: z.array(z.string().min(1)).default([...DEFAULT_SECRET_TOOLS]),
  /** Per LLM backend id: the tool policy and tool budget of runs on that backend. */
  backends: backendsSchema,
});

export type Profile = z.infer<typeof profileSchema>;

export interface ProfileLoadError {
  file: string;
  error: string;
}

export class ProfileRegistry {
  private readonly profiles = new Map<string, Profile>();
  readonly errors: ProfileLoadError[] = [];

  constructor(
    profiles: Profile[],
    readonly defaultId: string,
  ) {
    for (const p of profiles) this.profiles.set(p.id, p);
  }

  /** Loads every `*.json` of `dir`; unreadable or invalid files land in `errors`. */
  static fromDirectory(dir: string, defaultId: string): ProfileRegistry {
    const loaded: Profile[] = [];
    const errors: ProfileLoadError[] = [];
    let files: string[] = [];
    try {
      files = readdirSync(dir)
        .filter((f) => f.endsWith('.json'))
        .sort();
    } catch (err) {
      errors.push({ file: dir, error: `cannot read profiles folder: ${(err as Error).message}` });
    }
    for (const file of files) {
      try {
        const parsed = profileSchema.safeParse(JSON.parse(readFileSync(join(dir, file), 'utf8')));
        if (parsed.success) loaded.push(parsed.data);
        else
          errors.push({
            file,
            error: parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '),
          });
      } catch (err) {
        errors.push({ file, error: (err as Error).message });
      }
    }
    const registry = new ProfileRegistry(loaded, defaultId);
    registry.errors.push(...errors);
    if (loaded.length === 0) registry.profiles.set(fallbackProfile.id, fallbackProfile);
    return registry;
  }

  get(id: string): Profile | undefined {
    return this.profiles.get(id);
  }

  has(id: string): boolean {
    return this.profiles.has(id);
  }

  list(): Profile[] {
    return [...this.profiles.values()];
  }

  /** The profile for sessions created without one; the first profile if DEFAULT_PROFILE is missing. */
  getDefault(): Profile {
    const p = this.profiles.get(this.defaultId) ?? this.profiles.values().next().value;
    if (!p) throw new Error('no profiles loaded');
    return p;
  }
}

/** Used only when PROFILES_DIR holds no valid profile, so Navi still starts. */
const fallbackProfile: Profile = profileSchema.parse({
  id: 'secretary',
  name: 'Personal Secretary',
  system_prompt: 'You are a helpful personal assistant.',
});
