import { Credits, type Estimate, type Payer, type Spent } from "../../src/accounts/usage/Credits.ts"

/** A finished billable call: holds `usage.credits` and settles them at once (403 when they do not fit). */
export const spend = (payer: Payer, usage: Estimate & Spent) =>
  Credits.use((credits) => credits.withHold(payer, usage, (hold) => hold.report(usage)))
