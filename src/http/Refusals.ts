import { Effect } from "effect"
import { BadRequest, Forbidden, InternalError, NotFound, RateLimited } from "../platform/Errors.ts"
import { isRefusal, type Refusal, type RefusalKind } from "../platform/Refusal.ts"

/**
 * The one mapping from the domain's refusals to HTTP: each kind answers its
 * status with `{"error": <the refusal's message>}`. Areas declare their
 * errors' kinds once (`platform/Refusal.ts`); handlers pass their services'
 * effects through `answer`.
 */
const answers = {
  Invalid: BadRequest,
  Denied: Forbidden,
  NotFound,
  Limited: RateLimited,
  Failed: InternalError
} as const satisfies Record<RefusalKind, new(fields: { readonly error: string }) => unknown>

/** `E` with each refusal replaced by the API error of its kind. */
export type Answered<E> = E extends Refusal<infer K> ? InstanceType<(typeof answers)[K]> : E

/** The HTTP answer of a refusal. */
export const answerOf = <K extends RefusalKind>(refusal: Refusal<K>): InstanceType<(typeof answers)[K]> =>
  new answers[refusal.refusal]({ error: refusal.message }) as InstanceType<(typeof answers)[K]>

/** `effect` with its refusals turned into API errors, at the HTTP edge. */
export const answer = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, Answered<E>, R> =>
  Effect.mapError(effect, (error) => (isRefusal(error) ? answerOf(error) : error) as Answered<E>)
