/**
 * The `card_grid` UI component's payload as stored by an older Navi, before the shared schema
 * (src/protocol/ui-components.ts), read leniently: a model may have named things slightly
 * differently, and a card with only a title is still worth showing. The fallback when
 * `validateUiComponent` refuses a stored payload.
 */
// Relative rather than `@protocol`, as in vault.ts; types only.
import type { CardGridPayload, GridCard } from '../../../src/protocol/ui-components.js';

type CardField = NonNullable<GridCard['fields']>[number];

function str(value: unknown): string | undefined {
  if (typeof value === 'string' && value.trim() !== '') return value;
  if (typeof value === 'number') return String(value);
  return undefined;
}

function fieldsOf(value: unknown): CardField[] {
  if (Array.isArray(value)) {
    return value
      .map((item): CardField | null => {
        if (!item || typeof item !== 'object') return null;
        const o = item as Record<string, unknown>;
        const label = str(o.label) ?? str(o.name) ?? str(o.key);
        if (!label) return null;
        const v = o.value;
        return { label, value: typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v ?? '') };
      })
      .filter((f): f is CardField => f !== null);
  }
  if (value && typeof value === 'object') {
    return Object.entries(value as Record<string, unknown>).map(([label, v]) => ({
      label,
      value: typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v ?? ''),
    }));
  }
  return [];
}

function safeUrl(value: string | undefined): string | undefined {
  if (!value) return undefined;
  if (/^(https?:|\/|data:image\/)/i.test(value)) return value;
  return undefined;
}

export function parseCardGrid(payload: unknown): CardGridPayload | null {
  if (!payload || typeof payload !== 'object') return null;
  const p = payload as Record<string, unknown>;
  const list = Array.isArray(p.cards) ? p.cards : Array.isArray(p.items) ? p.items : null;
  if (!list) return null;
  const cards: GridCard[] = [];
  list.forEach((raw: unknown, index: number) => {
    if (!raw || typeof raw !== 'object') return;
    const c = raw as Record<string, unknown>;
    const title = str(c.title) ?? str(c.name) ?? str(c.label) ?? `Item ${index + 1}`;
    const image =
      c.image && typeof c.image === 'object' ? str((c.image as Record<string, unknown>).src) : str(c.image);
    const detailsText = typeof c.details === 'string' ? c.details : (str(c.body) ?? str(c.content));
    cards.push({
      id: str(c.id) ?? `card-${index}`,
      title,
      subtitle: str(c.subtitle),
      description: str(c.description) ?? str(c.summary),
      image: safeUrl(image ?? str(c.image_url) ?? str(c.thumbnail)),
      url: safeUrl(str(c.url) ?? str(c.link)),
      tags: Array.isArray(c.tags) ? c.tags.map(String) : [],
      details: detailsText,
      fields: [
        ...fieldsOf(c.fields),
        ...fieldsOf(c.metadata),
        ...(c.details && typeof c.details === 'object' ? fieldsOf(c.details) : []),
      ],
    });
  });
  return { title: str(p.title), description: str(p.description), cards };
}
