import { Array as Arr, Cause, Channel, Effect, Pull, type Scope, Stream } from "effect"

/** How `mapChunks` maps one run of a stream. */
export interface ChunkMapper<A, B, E, R> {
  /** What to emit for a chunk the stream pulled; nothing emitted pulls the next chunk. */
  readonly chunk: (chunk: Arr.NonEmptyReadonlyArray<A>) => Effect.Effect<ReadonlyArray<B>, E, R>
  /** What to emit once the stream has ended. */
  readonly end?: Effect.Effect<ReadonlyArray<B>, E, R>
}

/**
 * Maps a stream a chunk at a time; `start` runs at each run of the stream
 * and answers the mapper, which may keep state for that run. What arrived
 * together leaves together: a server writes one chunk in one write, where
 * `map` with `flattenIterable`, or `mapEffect`, emit a chunk per element,
 * each taking its own turn through every later stage and its own write.
 */
export const mapChunks = <A, E, R, B, E2, R2>(
  self: Stream.Stream<A, E, R>,
  start: () => ChunkMapper<A, B, E2, R2>
): Stream.Stream<B, E | E2, R | R2> =>
  Stream.transformPull(self, (pull) =>
    Effect.sync(() => {
      const mapper = start()
      let ended = false
      const afterLast = Effect.suspend(() => {
        if (ended || mapper.end === undefined) return Cause.done()
        ended = true
        return Effect.flatMap(mapper.end, (out) => (Arr.isReadonlyArrayNonEmpty(out) ? Effect.succeed(out) : Cause.done()))
      })
      const next: Pull.Pull<Arr.NonEmptyReadonlyArray<B>, E | E2, void, R2> = Pull.catchDone(
        Effect.flatMap(pull, (chunk) =>
          Effect.flatMap(mapper.chunk(chunk), (out) => (Arr.isReadonlyArrayNonEmpty(out) ? Effect.succeed(out) : next))),
        () => afterLast
      )
      return next
    }))

/**
 * The stream with `first` emitted before anything it pulls. Unlike
 * `Stream.concat`, it keeps no `WeakMap` entry: in a young-generation
 * collection V8 keeps a `WeakMap`'s values alive, and `concat`'s value holds
 * both streams, so each finished request was copied once more.
 */
export const prepend = <A, E, R>(self: Stream.Stream<A, E, R>, first: Arr.NonEmptyReadonlyArray<A>): Stream.Stream<A, E, R> =>
  Stream.transformPull(self, (pull) =>
    Effect.sync(() => {
      let pending: Arr.NonEmptyReadonlyArray<A> | undefined = first
      return Effect.suspend(() => {
        if (pending === undefined) return pull
        const chunk = pending
        pending = undefined
        return Effect.succeed(chunk)
      })
    }))

/**
 * Runs the stream up to its first chunk, so that a failure before any
 * output fails this effect, and answers the whole stream, which goes on
 * from there when it runs, in the current scope. The stream needs no
 * services: the rest then runs on any fiber as it is, where `Stream.peel`
 * provides the context it captured on every pull.
 */
export const started = <A, E>(self: Stream.Stream<A, E>): Effect.Effect<Stream.Stream<A, E>, E, Scope.Scope> =>
  Effect.flatMap(Effect.scope, (scope) =>
    Effect.flatMap(Channel.toPullScoped(self.channel, scope), (pull) =>
      Pull.catchDone(
        Effect.map(pull, (first) => prepend(Stream.fromPull(Effect.succeed(pull)), first)),
        () => Effect.succeed(Stream.empty)
      )))
