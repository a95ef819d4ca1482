/**
 * Claimed but not done (docs/local-models.md#claimed-but-not-done): small models often answer
 * "I have saved the file" without having called a tool. `findUnverifiedClaims` finds the
 * sentences of an answer in which the assistant says it acted, and keeps those that no successful
 * tool call of the run can account for.
 *
 * It is built to be precise rather than thorough, since a false alarm on an honest answer costs
 * more trust than a missed one: a sentence counts only when it plainly states a finished action
 * of the assistant's ("I have saved…", "I sent…", "…has been created", "Done — the file is
 * written"). Questions, conditions, plans and offers ("I will save", "I can create", "Shall I
 * send"), negations, quoted and code text, talk about the answer itself ("I wrote a summary
 * below") and earlier turns ("as I sent earlier") are left alone. A claim is backed by any
 * successful call of a tool of a fitting kind; a tool that runs commands or a subagent could
 * have done anything, so it backs every claim.
 */

/** A tool call of the run, as the check needs it. */
export interface RunCall {
  name: string;
  success: boolean;
}

type Kind = 'change' | 'send' | 'schedule' | 'run';

interface Verb {
  kind: Kind;
  /**
   * For verbs that also describe writing the answer or thinking ("I wrote a summary", "I created
   * a table", "I ran into"): the sentence counts only when it also names something of this kind
   * outside the answer.
   */
  cue?: RegExp;
}

/** What lives outside the answer: files, paths, stores. */
const CHANGE_CUE =
  /\b(?:files?|folders?|director(?:y|ies)|repo(?:sitory)?|database|disk|paths?|memory|backups?|calendar|branch|commit|records?|entr(?:y|ies)|reminders?|workspace|drive)\b|(?:^|[\s(])(?:~|\.{1,2})?\/[\w.-]+|\.[a-z][a-z0-9]{0,4}\b/i;
const RUN_CUE =
  /\b(?:commands?|scripts?|tests?|builds?|migrations?|jobs?|servers?|services?|containers?|packages?|programs?|installers?|process(?:es)?|daemons?)\b/i;
const SEND_CUE = /\b(?:forms?|issues?|comments?|messages?|emails?|webhooks?|channels?|requests?)\b/i;
const SCHEDULE_CUE = /\b(?:appointments?|meetings?|flights?|rooms?|slots?|reservations?|tables?)\b/i;

const VERBS: Record<string, Verb> = {};
function verbs(kind: Kind, cue: RegExp | undefined, forms: string): void {
  for (const form of forms.split(' ')) VERBS[form] = cue ? { kind, cue } : { kind };
}
verbs('change', undefined, 'saved deleted overwritten overwrote uploaded stored');
verbs(
  'change',
  CHANGE_CUE,
  'wrote written created edited modified updated changed added removed renamed moved copied appended replaced',
);
verbs('send', undefined, 'sent emailed mailed forwarded texted messaged notified');
verbs('send', SEND_CUE, 'posted replied submitted');
verbs('schedule', undefined, 'scheduled');
verbs('schedule', SCHEDULE_CUE, 'booked');
verbs('run', undefined, 'executed installed uninstalled deployed restarted rebooted launched');
verbs('run', RUN_CUE, 'ran run started stopped killed built compiled tested configured');

const VERB_ALTERNATION = Object.keys(VERBS)
  .sort((a, b) => b.length - a.length)
  .join('|');
const FILLER = String.raw`(?:(?:just|also|now|already|successfully|then|quickly|gone ahead and|went ahead and)\s+)*`;

/** "I saved", "I've saved", "I have now saved" (first person, finished). */
const FIRST_PERSON = new RegExp(String.raw`\bI(?:'ve|’ve|\s+have)?\s+${FILLER}(${VERB_ALTERNATION})\b`, 'gi');
/** "…has been saved", "…have been sent". */
const PASSIVE = new RegExp(
  String.raw`\b(?:has|have)\s+${FILLER}been\s+${FILLER}(${VERB_ALTERNATION})\b`,
  'gi',
);
/** "…is now saved", and after a leading "Done": "Done — the file is written". */
const STATE_NOW = new RegExp(String.raw`\b(?:is|are)\s+now\s+(${VERB_ALTERNATION})\b`, 'gi');
const STATE_DONE = new RegExp(String.raw`^(?:all\s+)?done\b.*?\b(?:is|are)\s+(${VERB_ALTERNATION})\b`, 'gi');
/** More verbs of the same claim: "I saved the file and emailed it". */
const CHAINED = new RegExp(String.raw`(?:,|\band|\bthen)\s+${FILLER}(${VERB_ALTERNATION})\b`, 'gi');
/** "I set a reminder", "I've set up a recall". */
const REMINDER =
  /\bI(?:'ve|’ve|\s+have)?\s+(?:just\s+|also\s+)?set(?:\s+up)?\s+(?:a|an|the|your)\s+(?:reminder|recall|alarm|timer)\b/i;

/**
 * Anywhere in a sentence, these make it no claim: conditions, negations, earlier turns (this
 * run's calls cannot speak for them), the answer itself, examples.
 */
const NEVER_A_CLAIM = new RegExp(
  [
    String.raw`\b(?:if|unless|once|whether|until|in case)\b`,
    String.raw`\b(?:not|never|no|nothing|none|neither|nor|without|cannot|unable|failed|fail|fails)\b`,
    String.raw`n(?:'|’)t\b`,
    String.raw`\b(?:earlier|previously|last time|yesterday|ago|before that|in (?:my|the) (?:last|previous))\b`,
    String.raw`\b(?:below|above|following|here(?:'s|’s| is| are)|in this (?:message|answer|reply|response))\b`,
    String.raw`\b(?:for example|e\.g|i\.e|such as|something like|pretend|imagine|suppose)\b`,
  ].join('|'),
  'i',
);
/**
 * Before the claimed verb, these make it a plan or an offer ("I will save", "I can create",
 * "it should have been sent"); after it they speak of the user ("so you can open it").
 */
const PLAN_OR_OFFER =
  /\b(?:will|would|shall|should|could|can|may|might|must|going to|gonna|want to|need to|plan to|about to|try to|trying to|ready to|able to|let me|allow me)\b|(?:'ll|’ll|'d|’d)\b/i;

const KIND_TOOLS: Record<Kind, RegExp> = {
  change:
    /file|fs|write|edit|save|creat|delet|remov|renam|move|copy|upload|publish|share|memory|scratchpad|todo|note|calendar|contact|doc|sheet|drive|git|sql|db|database|store|kv|recall|remind|mcp_server/i,
  send: /send|mail|smtp|imap|message|msg|http|request|fetch|post|webhook|notif|slack|telegram|discord|sms|whatsapp|chat|reply|forward|share|publish|upload/i,
  schedule: /recall|remind|schedul|cron|timer|alarm|calendar|event|todo|task/i,
  run: /run|install|docker|deploy|build|compile|test|start|restart|service|systemctl/i,
};
/** Tools that can do anything a claim might say: commands, code, remote shells, subagents. */
const ANY_KIND = /terminal|process|code_exec|exec|shell|ssh|command|script|spawn_agent|subagent|agent/i;

/**
 * The sentences of `answer` claiming an action no successful call in `calls` backs, quoted as
 * written (at most 200 characters each, each once, at most five).
 */
export function findUnverifiedClaims(answer: string, calls: readonly RunCall[]): string[] {
  const done = calls.filter((c) => c.success).map((c) => c.name);
  const backs = (kind: Kind) => done.some((name) => ANY_KIND.test(name) || KIND_TOOLS[kind].test(name));
  const found: string[] = [];
  for (const sentence of sentences(plainText(answer))) {
    const kinds = claimedKinds(sentence);
    if (kinds.length === 0 || kinds.every(backs)) continue;
    const quote = sentence.length > 200 ? `${sentence.slice(0, 199).trimEnd()}…` : sentence;
    if (!found.includes(quote)) found.push(quote);
    if (found.length === 5) break;
  }
  return found;
}

/** The kinds of action `sentence` claims as done; none when it claims nothing. */
function claimedKinds(sentence: string): Kind[] {
  if (sentence.endsWith('?') || NEVER_A_CLAIM.test(sentence)) return [];
  const kinds = new Set<Kind>();
  const note = (form: string | undefined) => {
    const verb = form ? VERBS[form.toLowerCase()] : undefined;
    if (verb && (!verb.cue || verb.cue.test(sentence))) kinds.add(verb.kind);
  };
  let claim: { start: number; end: number } | undefined;
  for (const pattern of [FIRST_PERSON, PASSIVE, STATE_NOW, STATE_DONE]) {
    for (const m of sentence.matchAll(pattern)) {
      if (PLAN_OR_OFFER.test(sentence.slice(0, m.index + m[0].length))) continue;
      note(m[1]);
      if (!claim || m.index < claim.start) claim = { start: m.index, end: m.index + m[0].length };
    }
  }
  const reminder = REMINDER.exec(sentence);
  if (reminder && !PLAN_OR_OFFER.test(sentence.slice(0, reminder.index + reminder[0].length)))
    kinds.add('schedule');
  if (claim) for (const m of sentence.slice(claim.end).matchAll(CHAINED)) note(m[1]);
  return [...kinds];
}

/** The answer without what it quotes: code blocks, inline code, quotations and quoted lines. */
function plainText(answer: string): string {
  return answer
    .replace(/```[\s\S]*?(?:```|$)/g, '\n')
    .replace(/`[^`\n]*`/g, ' ')
    .replace(/^\s*>.*$/gm, '\n')
    .replace(/"[^"\n]*"|“[^”\n]*”/g, ' ');
}

/** Sentences and list items, trimmed, without Markdown emphasis and list markers. */
function sentences(text: string): string[] {
  return text
    .split(/(?<=[.!?;])\s+|\n+/)
    .map((s) =>
      s
        .replace(/[*_]{1,3}/g, '')
        .replace(/^\s*(?:[-+•]|\d+[.)])\s+/, '')
        .trim(),
    )
    .filter((s) => s.length > 0);
}
