import { PgClient } from "@effect/sql-pg"
import { Context, Effect, Layer, Option, PubSub, Scope, Stream } from "effect"

/**
 * Change notifications between server processes: a topic is published when
 * something that processes cache changes (a key is revoked, a role changes),
 * and every process — this one included — runs its subscribers. On
 * PostgreSQL this is LISTEN/NOTIFY; the embedded database and the memory
 * backend serve a single process, so an in-process hub is enough there.
 */
export interface ChangeFeedService {
  readonly publish: (topic: string) => Effect.Effect<void>
  /** Runs `onChange` after each publication of `topic` until the scope closes. */
  readonly subscribe: (topic: string, onChange: Effect.Effect<void>) => Effect.Effect<void, never, Scope.Scope>
}

export class ChangeFeed extends Context.Service<ChangeFeed, ChangeFeedService>()("storage/ChangeFeed") {
  static readonly local = Layer.effect(ChangeFeed, Effect.gen(function*() {
    const hub = yield* PubSub.unbounded<string>()
    return {
      publish: (topic) => Effect.asVoid(PubSub.publish(hub, topic)),
      subscribe: (topic, onChange) =>
        Effect.asVoid(Effect.forkScoped(
          Stream.runForEach(Stream.filter(Stream.fromPubSub(hub), (published) => published === topic), () => onChange)
        ))
    }
  }))

  /** LISTEN/NOTIFY when the SQL client is PostgreSQL, else the in-process hub. */
  static readonly layer = Layer.unwrap(Effect.map(Effect.serviceOption(PgClient.PgClient), Option.match({
    onNone: () => ChangeFeed.local,
    onSome: (pg) =>
      Layer.succeed(ChangeFeed, {
        publish: (topic) =>
          pg.notify(topic, "").pipe(
            Effect.tapError((error) => Effect.logError("Could not publish change", { topic, error: error.message })),
            Effect.ignore
          ),
        subscribe: (topic, onChange) =>
          Effect.gen(function*() {
            const queue = yield* Effect.orDie(pg.listen(topic))
            yield* Effect.forkScoped(Stream.runForEach(Stream.fromQueue(queue), () => onChange).pipe(Effect.ignore))
          })
      })
  })))
}
