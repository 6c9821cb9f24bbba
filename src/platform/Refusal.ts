import { type Cause, Data, Effect, Option } from "effect"

/**
 * What kind of refusal a domain error is, in the domain's words. Services and
 * workers fail with their area's own tagged errors, each of one kind; only the
 * HTTP edge (`http/Refusals.ts`) gives a kind its status, so no area and no
 * worker reasons in HTTP statuses.
 */
export type RefusalKind = "Invalid" | "Denied" | "NotFound" | "Limited" | "Failed"

/** A domain error: its tag names what happened, `refusal` its kind, `message` what the caller reads. */
export interface Refusal<K extends RefusalKind = RefusalKind> extends Cause.YieldableError {
  readonly _tag: string
  readonly refusal: K
  readonly message: string
}

/**
 * Declares a domain error class whose message derives from its fields:
 * `class ProjectNotFound extends refusal("NotFound", "ProjectNotFound", ({ id }: { readonly id: string }) => \`Project ${id} not found\`) {}`,
 * failed with `new ProjectNotFound({ id })`.
 */
export const refusal = <const K extends RefusalKind, const Tag extends string, A extends Record<string, unknown>>(
  kind: K,
  tag: Tag,
  describe: (fields: A) => string
) =>
  class extends Data.TaggedError(tag)<Record<string, unknown>> {
    readonly refusal: K = kind
    constructor(fields: A) {
      super(fields)
      this.message = describe(fields)
    }
  } as unknown as new(fields: A) => Refusal<K> & { readonly _tag: Tag } & Readonly<A>

/** A domain error class whose thrower words the message: `new TaskRefused({ message: "…" })`. */
export const plainRefusal = <const K extends RefusalKind, const Tag extends string>(kind: K, tag: Tag) =>
  refusal(kind, tag, ({ message }: { readonly message: string }) => message)

/** Whether `error` is a domain error (of any area). */
export const isRefusal = (error: unknown): error is Refusal =>
  typeof error === "object" && error !== null && "refusal" in error && "_tag" in error

/** A lookup's value, or the refusal `refused()` when there is none. */
export const orRefuse = <E>(refused: () => E) => <A>(found: Option.Option<A>): Effect.Effect<A, E> =>
  Option.match(found, { onNone: () => Effect.fail(refused()), onSome: Effect.succeed })
