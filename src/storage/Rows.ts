/** PostgreSQL answers `bigint` columns as JS bigints (sql-pg) or numbers (PGlite): read them as numbers. */
export const toNumber = (value: unknown): number => (value === null || value === undefined ? 0 : Number(value))

/** A `jsonb` parameter for either driver: sent as text, cast in SQL with `::jsonb`. */
export const jsonParam = (value: unknown): string => JSON.stringify(value)

/** LIKE pattern for a literal substring. */
export const containing = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`
