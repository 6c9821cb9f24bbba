import { refusal } from "../../platform/Refusal.ts"

/** No user with this id. */
export class UserNotFound extends refusal("NotFound", "UserNotFound", ({ id }: { readonly id: string }) => `User ${id} not found`) {}

/** Users are unique by email. */
export class EmailTaken extends refusal(
  "Invalid",
  "EmailTaken",
  ({ email }: { readonly email: string }) => `A user with email ${email} already exists`
) {}
