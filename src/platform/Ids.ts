import { v7 as uuidv7 } from "uuid"

/**
 * Opaque, time-sortable ids: a short type prefix and a UUIDv7 without dashes
 * (`prj_0190b6c1d2e37f6a8b...`). The prefix tells a reader what an id names.
 */
export const newId = (prefix: string): string => `${prefix}_${uuidv7().replaceAll("-", "")}`
