// Token prices for backends that report no cost (Codex, the VS Code LM API): USD per
// million tokens by model, matched by the longest model-name prefix, with a `default`
// row for unknown models. The defaults are list prices at the time of writing;
// ralph.config.json can override or extend them.
import { z } from 'zod';
import type { TokenCounts } from './types';

export const priceRowSchema = z.strictObject({
  input: z.number().nonnegative(),
  output: z.number().nonnegative(),
  cacheRead: z.number().nonnegative(),
  cacheCreate: z.number().nonnegative(),
});
export type PriceRow = z.infer<typeof priceRowSchema>;

/** Model-name prefix -> price row; must contain `default`. */
export const priceTableSchema = z
  .record(z.string(), priceRowSchema)
  .refine((t) => 'default' in t, { message: 'a price table needs a "default" row' });
export type PriceTable = Readonly<Record<string, PriceRow>>;

export const DEFAULT_PRICES: PriceTable = {
  'gpt-5.5': { input: 1.25, output: 10, cacheRead: 0.125, cacheCreate: 0 },
  'gpt-5-mini': { input: 0.25, output: 2, cacheRead: 0.025, cacheCreate: 0 },
  'gpt-5-nano': { input: 0.05, output: 0.4, cacheRead: 0.005, cacheCreate: 0 },
  'gpt-5': { input: 1.25, output: 10, cacheRead: 0.125, cacheCreate: 0 },
  'gpt-4.1': { input: 2, output: 8, cacheRead: 0.5, cacheCreate: 0 },
  o3: { input: 2, output: 8, cacheRead: 0.5, cacheCreate: 0 },
  'claude-opus': { input: 15, output: 75, cacheRead: 1.5, cacheCreate: 18.75 },
  'claude-sonnet': { input: 3, output: 15, cacheRead: 0.3, cacheCreate: 3.75 },
  'claude-haiku': { input: 1, output: 5, cacheRead: 0.1, cacheCreate: 1.25 },
  default: { input: 2, output: 10, cacheRead: 0.2, cacheCreate: 0 },
};

/** The overrides laid over the defaults (an override row replaces a default row). */
export function mergePrices(overrides: Readonly<Record<string, PriceRow>> | undefined): PriceTable {
  return { ...DEFAULT_PRICES, ...(overrides ?? {}) };
}

/** The row for a model: the longest matching prefix, else `default`. */
export function priceRowFor(table: PriceTable, model: string): PriceRow {
  let best: string | undefined;
  for (const key of Object.keys(table)) {
    if (key !== 'default' && model.startsWith(key) && (best === undefined || key.length > best.length)) best = key;
  }
  const row = table[best ?? 'default'] ?? table.default;
  if (row === undefined) throw new Error('price table has no "default" row');
  return row;
}

/** Cost in USD, rounded to 1e-6. */
export function priceTokens(table: PriceTable, model: string, tokens: TokenCounts): number {
  const p = priceRowFor(table, model);
  const usd =
    (tokens.input * p.input + tokens.output * p.output + tokens.cacheRead * p.cacheRead + tokens.cacheCreate * p.cacheCreate) / 1e6;
  return Math.round(usd * 1e6) / 1e6;
}
