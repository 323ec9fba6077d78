// The compile-time half of an exhaustive switch over a union.

/**
 * Called from a switch's `default:` with the narrowed value: it compiles only when every
 * member of the union has its case. At run time (a value from outside the types) it
 * returns `fallback`, so an unknown event leaves a projection as it was.
 */
export function unhandled<T>(_value: never, fallback: T): T {
  return fallback;
}
