import { refusal } from "../../platform/Refusal.ts"
import type { CreditPool } from "./UsageRepo.ts"

/** The organization's balance (or data-credit balance) cannot cover a hold. */
export class InsufficientCredits extends refusal(
  "Denied",
  "InsufficientCredits",
  ({ pool }: { readonly pool: CreditPool }) => pool === "data" ? "Insufficient data credits" : "Insufficient credits"
) {}

/** A usage window that ends before it starts. */
export class InvalidUsageWindow extends refusal("Invalid", "InvalidUsageWindow", (_: {}) => "startDate must not be after endDate") {}
