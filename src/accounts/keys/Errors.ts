import { refusal } from "../../platform/Refusal.ts"

/** A company key of that name exists already. */
export class KeyNameTaken extends refusal(
  "Invalid",
  "KeyNameTaken",
  ({ name }: { readonly name: string }) => `An API key named "${name}" already exists for this company`
) {}

/** A key would expire before it is issued. */
export class ExpiryInPast extends refusal("Invalid", "ExpiryInPast", (_: {}) => "expiresAt must be in the future") {}

/** No company key of that name in the caller's company. */
export class CompanyKeyNotFound extends refusal(
  "NotFound",
  "CompanyKeyNotFound",
  ({ name }: { readonly name: string }) => `No API key named "${name}" for this company`
) {}

/** The company has no key at all. */
export class NoCompanyKey extends refusal("NotFound", "NoCompanyKey", (_: {}) => "This company has no API key") {}

/** A personal access key of the caller's with that id does not exist. */
export class PersonalKeyNotFound extends refusal(
  "NotFound",
  "PersonalKeyNotFound",
  ({ id }: { readonly id: string }) => `Personal access key ${id} not found`
) {}

/** Personal access keys belong to people: a company key has none. */
export class NotAPerson extends refusal(
  "Denied",
  "NotAPerson",
  (_: {}) => "A company API key has no personal access keys: use a personal access key"
) {}
