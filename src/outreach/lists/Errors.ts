import { refusal } from "../../platform/Refusal.ts"

/** No contact list with this id in the caller's company. */
export class ListNotFound extends refusal(
  "NotFound",
  "ListNotFound",
  ({ id }: { readonly id: string }) => `Contact list ${id} not found`
) {}

/** No row with this id in the contact list. */
export class RowNotFound extends refusal(
  "NotFound",
  "RowNotFound",
  ({ listId, rowId }: { readonly listId: string; readonly rowId: string }) =>
    `Row ${rowId} not found in contact list ${listId}`
) {}

/** An address that is not on the company's suppression list. */
export class NotSuppressed extends refusal(
  "NotFound",
  "NotSuppressed",
  ({ email }: { readonly email: string }) => `${email} is not on the suppression list`
) {}

/** The list a campaign or sequence names is not one of the company's lists. */
export class RecipientListNotFound extends refusal(
  "NotFound",
  "RecipientListNotFound",
  ({ id }: { readonly id: string }) => `List ${id} not found`
) {}
