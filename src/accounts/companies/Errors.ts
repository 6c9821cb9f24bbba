import { refusal } from "../../platform/Refusal.ts"

/** No company with this id. */
export class CompanyNotFound extends refusal(
  "NotFound",
  "CompanyNotFound",
  ({ id }: { readonly id: string }) => `Company ${id} not found`
) {}

/** No user with this id in the company. */
export class CompanyUserNotFound extends refusal(
  "NotFound",
  "CompanyUserNotFound",
  ({ userId }: { readonly userId: string }) => `Company user ${userId} not found`
) {}

/** What only a company owner may do (`what` completes "Only a company owner can …"). */
export class OwnerOnly extends refusal(
  "Denied",
  "OwnerOnly",
  ({ what }: { readonly what: string }) => `Only a company owner can ${what}`
) {}

/** A person added to a company they belong to already. */
export class AlreadyInCompany extends refusal(
  "Invalid",
  "AlreadyInCompany",
  ({ who, companyId }: { readonly who: string; readonly companyId?: string }) =>
    companyId === undefined ? `${who} already belongs to this company` : `User ${who} already belongs to company ${companyId}`
) {}

/** A change that would leave the company without an owner. */
export class LastOwner extends refusal(
  "Invalid",
  "LastOwner",
  (_: {}) => "The last owner of a company cannot be removed or demoted"
) {}

/** The organization's plan allows no further company. */
export class CompanyLimitReached extends refusal(
  "Denied",
  "CompanyLimitReached",
  ({ limit }: { readonly limit: number }) => `Company limit reached: the organization's plan allows ${limit} companies`
) {}
