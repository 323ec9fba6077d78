// Finding the structured answer of a run whose backend has no native structured output:
// the last fenced ```json block of the final text, or the whole text when it is JSON.

/** The parsed JSON answer, or undefined when the text holds none. Never throws. */
export function extractJsonAnswer(text: string): unknown {
  const trimmed = text.trim();
  if (trimmed.length === 0) return undefined;
  const direct = tryParse(trimmed);
  if (direct !== undefined) return direct;
  const fences = [...trimmed.matchAll(/```(?:json)?\s*\n([\s\S]*?)```/g)];
  for (let i = fences.length - 1; i >= 0; i--) {
    const body = fences[i]?.[1];
    if (body === undefined) continue;
    const parsed = tryParse(body.trim());
    if (parsed !== undefined) return parsed;
  }
  return undefined;
}

function tryParse(text: string): unknown {
  if (!(text.startsWith('{') || text.startsWith('['))) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
