/**
 * Agent profiles (docs/architecture.md#settings-and-profiles): data files in PROFILES_DIR, one JSON object per file, validated
 * at start-up. A broken file is reported by name and skipped; the others load.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { describeProfileIssues } from './profile-issues.js';

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

/** What a profile id may be; it also names the profile's file, so it never holds a path. */
export const PROFILE_ID_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;

export const profileSchema = z.object({
  id: z.string().regex(PROFILE_ID_PATTERN, 'must be 1 to 64 letters, digits, _ and - only'),
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

/** A profile and the file in PROFILES_DIR it came from. */
export interface LoadedProfile {
  profile: Profile;
  file: string;
}

/** Reads every `*.json` of `dir`; unreadable or invalid files land in `errors`. */
function readProfiles(dir: string): { loaded: LoadedProfile[]; errors: ProfileLoadError[] } {
  const loaded: LoadedProfile[] = [];
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
      const input: unknown = JSON.parse(readFileSync(join(dir, file), 'utf8'));
      const parsed = profileSchema.safeParse(input);
      if (parsed.success) loaded.push({ profile: parsed.data, file });
      else errors.push({ file, error: describeProfileIssues(parsed.error, input) });
    } catch (err) {
      errors.push({ file, error: (err as Error).message });
    }
  }
  return { loaded, errors };
}

export class ProfileRegistry {
  private readonly profiles = new Map<string, Profile>();
  private readonly files = new Map<string, string>();
  readonly errors: ProfileLoadError[] = [];
  /** The folder the profiles were read from (none for a registry built in memory). */
  private dir: string | undefined;

  constructor(
    profiles: Profile[],
    readonly defaultId: string,
  ) {
    for (const p of profiles) this.profiles.set(p.id, p);
  }

  /** Loads every `*.json` of `dir`; unreadable or invalid files land in `errors`. */
  static fromDirectory(dir: string, defaultId: string): ProfileRegistry {
    const registry = new ProfileRegistry([], defaultId);
    registry.dir = dir;
    registry.reload();
    return registry;
  }

  /**
   * Reads the profiles folder again and replaces what the registry holds, in place, so every
   * holder of the registry (the agent, the tools) sees the new profiles from its next lookup.
   * Returns the files that failed (also in `errors`). A registry built in memory keeps its own.
   */
  reload(): ProfileLoadError[] {
    if (this.dir === undefined) return [];
    const { loaded, errors } = readProfiles(this.dir);
    this.profiles.clear();
    this.files.clear();
    for (const { profile, file } of loaded) {
      this.profiles.set(profile.id, profile);
      this.files.set(profile.id, file);
    }
    if (loaded.length === 0) this.profiles.set(fallbackProfile.id, fallbackProfile);
    this.errors.splice(0, this.errors.length, ...errors);
    return errors;
  }

  /** The folder the profiles come from, if they came from one. */
  get directory(): string | undefined {
    return this.dir;
  }

  /** The file in the profiles folder that holds profile `id`, if it came from one. */
  fileOf(id: string): string | undefined {
    return this.files.get(id);
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
