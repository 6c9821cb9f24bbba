import { Effect, Schema } from "effect"
import { HttpServerResponse } from "effect/http"

/**
 * A 200 JSON response of `value` encoded by `schema`, as HttpApi would answer
 * it: for answers cached whole, so that a hit is neither encoded nor
 * serialized again (a response is immutable, and the text is shared).
 */
export const jsonResponse = <S extends Schema.Top & { readonly EncodingServices: never }>(schema: S) => {
  const encode = Schema.encodeEffect(schema)
  return (value: S["Type"]) =>
    encode(value).pipe(
      Effect.map((encoded) => HttpServerResponse.text(JSON.stringify(encoded), { contentType: "application/json" })),
      Effect.orDie
    )
}
