/**
 * Deterministic fake embeddings: a signed hashed bag of words, L2-normalised. Texts sharing words
 * point the same way, unrelated texts are near orthogonal, and every run gives the same numbers.
 */

function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

export function fakeEmbedding(text: string, dimension = 64): number[] {
  const vector = new Array<number>(dimension).fill(0);
  const words = text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  for (const word of words) {
    const hash = fnv1a(word);
    const slot = hash % dimension;
    vector[slot] = (vector[slot] ?? 0) + (hash >>> 31 === 1 ? -1 : 1);
  }
  const norm = Math.sqrt(vector.reduce((sum, x) => sum + x * x, 0));
  // A text without words still gets a unit vector, so cosine similarity stays defined.
  if (norm === 0) {
    vector[0] = 1;
    return vector;
  }
  return vector.map((x) => x / norm);
}

export function cosine(a: number[], b: number[]): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] ?? 0;
    const y = b[i] ?? 0;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}
