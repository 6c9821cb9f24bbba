import { Schema } from "effect"

/**
 * The API's error vocabulary: what a client receives, each class tied to its
 * HTTP status. Services and workers never fail with these; they fail with
 * their area's refusals (`platform/Refusal.ts`), which `http/Refusals.ts`
 * turns into these at the edge. Each class encodes to exactly
 * `{"error": "..."}`: the `_tag` is omitted on the wire, yet the server and
 * the typed client still catch errors by tag (the client decodes by status).
 */
const apiError = <Self>() =>
<const Tag extends string>(tag: Tag, status: number, description: string) =>
  Schema.Error<Self>(tag)(
    { _tag: Schema.tagDefaultOmit(tag), error: Schema.String },
    { httpApiStatus: status, description }
  )

export class BadRequest extends apiError<BadRequest>()(
  "BadRequest",
  400,
  "Missing required field or invalid parameter value"
) {}

export class Unauthorized extends apiError<Unauthorized>()(
  "Unauthorized",
  401,
  "Missing, invalid or expired credentials"
) {}

export class Forbidden extends apiError<Forbidden>()(
  "Forbidden",
  403,
  "Feature not available on the plan or role"
) {}

export class NotFound extends apiError<NotFound>()(
  "NotFound",
  404,
  "Resource does not exist or belongs to another company"
) {}

export class RateLimited extends apiError<RateLimited>()("RateLimited", 429, "Rate limit exceeded") {}

export class InternalError extends apiError<InternalError>()("InternalError", 500, "Unexpected server error") {}

/** Every status the API may answer with, as the spec's table lists them. */
export const statusMessages: Record<number, string> = {
  400: "Bad request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not found",
  429: "Too many requests",
  500: "Internal server error"
}
