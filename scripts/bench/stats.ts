// Statistics every benchmark reports: percentiles, medians and ranges of samples.

/** The values in ascending order (a copy). */
export const ascending = (values: ReadonlyArray<number>) => values.toSorted((a, b) => a - b)

/** The value at `fraction` (0–1) of ascending values, nearest rank at or below: `percentile(sorted, 0.99)`. NaN when empty. */
export const percentile = (sorted: ReadonlyArray<number>, fraction: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))] ?? Number.NaN

/** The middle value (of an even count, the mean of the two middle ones). NaN when empty. */
export const median = (values: ReadonlyArray<number>) => {
  const sorted = ascending(values)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[middle] : sorted.length === 0 ? Number.NaN : (sorted[middle - 1] + sorted[middle]) / 2
}

/** Median, smallest and largest of values, or undefined when there are none. */
export const spread = (values: ReadonlyArray<number | undefined>) => {
  const known = values.filter((value): value is number => value !== undefined)
  return known.length === 0 ? undefined : { median: median(known), min: Math.min(...known), max: Math.max(...known) }
}

/** Count, p50, p99 and max of latency samples. */
export const latencySummary = (samples: ReadonlyArray<number>) => {
  const sorted = ascending(samples)
  return { count: sorted.length, p50Ms: percentile(sorted, 0.5), p99Ms: percentile(sorted, 0.99), maxMs: sorted.at(-1) ?? 0 }
}
